// Every file node starts: the `fencecheck` command and its subcommands, the
// processes and threads they start (lib/paths.ts entryFile names these without
// extension), and the two modules a package's users import (package.json
// "exports": the API and the adapter types). scripts/build.mjs bundles each;
// test/build-entries.test.ts checks that every entry the code starts, and every
// command of package.json, is listed here.
export const ENTRIES = [
  "cli/fencecheck",
  "cli/test",
  "cli/check",
  "cli/scenario",
  "cli/serve",
  "cli/soak",
  "cli/proxy",
  "cli/reap",
  "cli/experiment",
  "cli/setup",
  "api/index",
  "api/adapter",
  "runner/worker",
  "store/reader-thread",
  "checker/verdict-thread",
  "resource/main",
  "proxy/main",
  "backends/lockserver/main",
  "experiments/holder",
  "bench/checker",
  "bench/proxy",
  "torture/main",
  "bench/run-cost",
];

/** The modules whose type declarations the build emits (dist/types/), for package.json "exports". */
export const TYPED_ENTRIES = ["api/index", "api/adapter"];
