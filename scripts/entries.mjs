// Every file node starts: the commands of package.json, and the processes and
// threads they start (lib/paths.ts entryFile names these without extension).
// scripts/build.mjs bundles each; test/build-entries.test.ts checks that every
// entry the code starts, and every command of package.json, is listed here.
export const ENTRIES = [
  "cli/check",
  "cli/test-jepsen",
  "cli/scenario",
  "cli/serve",
  "cli/soak",
  "cli/proxy",
  "cli/reap",
  "cli/experiment",
  "runner/worker",
  "store/reader-thread",
  "checker/verdict-thread",
  "resource/main",
  "proxy/main",
  "experiments/holder",
  "bench/checker",
  "bench/proxy",
];
