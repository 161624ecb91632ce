// `fencecheck test` of a reference adapter program, for the tests of the
// adapters whose libraries come from PyPI: the run builds (or finds) the
// environment its manifest names, so the test only runs it and reads what it
// stored.
import { expect } from "vitest";
import { readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, runCli, latestRun, readNdjson } from "../helpers.ts";

/** Its exit, output, history, results and first worker's log (where the library names itself). */
export async function clientRun(args: string[], prefix: string) {
  const store = tempRunDir(prefix);
  const cli = runCli("test", [...args, "--store", store]);
  const exit = await cli.exit;
  const dir = realpathSync(latestRun(store));
  const [header, ...events] = readNdjson(join(dir, "history.ndjson"));
  return {
    exit,
    out: cli.stdout() + cli.stderr(),
    header,
    events,
    results: JSON.parse(readFileSync(join(dir, "results.json"), "utf8")),
    log: readFileSync(join(dir, "logs", "worker-1.log"), "utf8"),
  };
}

/**
 * A fenced run whose fences come from a Redis counter INCRed after the library's
 * grant: a pause landing between the two lets a later holder's INCR come first,
 * a fence-regression of the lock (docs/measurements.md) that the resource still
 * survives. The lock may show that; the resource must show nothing, and the exit
 * code must follow the verdict.
 */
export function expectResourceSafe(r: { exit: number | null; out: string; results: { anomaly_types: string[] } }): void {
  expect(r.results.anomaly_types.every((t) => t === "fence-regression"), r.out).toBe(true);
  expect(r.exit, r.out).toBe(r.results.anomaly_types.length ? 1 : 0);
}
