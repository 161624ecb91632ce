// Every file node starts: the `fencecheck` command and its subcommands, the
// processes and threads they start (lib/paths.ts entryFile names these without
// extension), and the two modules a package's users import (package.json
// "exports": the API and the adapter types). A backend's own entry points are
// found in its folder by their names, so that adding one touches nothing here:
// main.ts, a server of its own run as a process (backends/lockserver/), and
// decider.ts, the module the resource process loads to decide in the store the
// backend offers (--resource NAME). scripts/build.mjs bundles each;
// test/build-entries.test.ts checks that every entry the code starts, and every
// command of package.json, is listed here.
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ENTRIES = [
  "cli/fencecheck",
  "cli/test",
  "cli/check",
  "cli/traces",
  "cli/scenario",
  "cli/serve",
  "cli/soak",
  "cli/proxy",
  "cli/reap",
  "cli/experiment",
  "cli/setup",
  "api/index",
  "api/adapter",
  "otel/index",
  // Imported by the build itself: the option table the API's published types are written from.
  "api/test-options",
  "runner/worker",
  "store/reader-thread",
  "checker/verdict-thread",
  "resource/main",
  "proxy/main",
  "experiments/holder",
  "bench/checker",
  "bench/proxy",
  "torture/main",
  "bench/run-cost",
  ...backendEntries(),
];

function backendEntries() {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..", "backends");
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => ["main", "decider"].filter((f) => existsSync(join(root, d.name, `${f}.ts`))).map((f) => `backends/${d.name}/${f}`))
    .sort();
}

/** The modules whose type declarations the build emits (dist/types/), for package.json "exports". */
export const TYPED_ENTRIES = ["api/index", "api/adapter", "otel/index"];
