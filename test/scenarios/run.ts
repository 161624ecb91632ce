// Runs one scenario through its CLI, as a user would, and loads what it stored.
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { again, tempRunDir, runCli, latestRun, readNdjson, processesMentioning } from "../helpers.ts";

export type Event = { index: number; time: number; process: number | "nemesis"; type: string; f: string; error?: string; value?: Record<string, unknown> };
export type Decision = { seq: number; op: "write" | "read"; process: number; owner: string; fence: number | null; accepted: boolean; data: unknown };
export type Witness = { events?: number[]; seqs?: number[]; explanation: string; behind?: string[] };

/**
 * The scenario run until `ready` holds of it, at most `runs` times: for a row
 * whose script needs something in flight at a clock moment (a grant made, a
 * heartbeat sent), which a loaded machine can make late. A run where it did not
 * happen shows nothing of the row either way, so it is made again; the last run
 * is returned whatever it shows, and the test's assertions judge it.
 */
export async function scenarioWhere(id: string, ready: (r: ScenarioRun) => boolean, args: string[] = []): Promise<ScenarioRun> {
  return again(() => scenario(id, ...args), ready);
}

export type ScenarioRun = Awaited<ReturnType<typeof scenario>>;

export async function scenario(id: string, ...args: string[]) {
  const store = tempRunDir(`fc-${id.toLowerCase()}-`);
  // mkdtemp makes it 0700: a Postgres scenario's server (the postgres user) must pass through.
  chmodSync(store, 0o755);
  const cli = runCli("scenario", [id, ...args, "--store", store]);
  const code = await cli.exit;
  const out = cli.stdout() + cli.stderr();
  const dir = latestRun(store);
  expect(existsSync(join(dir, "results.json")), `no results for ${id} ${args.join(" ")}:\n${out}`).toBe(true);
  const history = readNdjson(join(dir, "history.ndjson")).slice(1) as unknown as Event[];
  const decisions = readNdjson(join(dir, "resource.ndjson")) as unknown as Decision[];
  const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8")) as {
    valid: boolean | "unknown";
    anomaly_types: string[];
    anomalies: Record<string, Witness[]>;
    liveness?: { strict: boolean; findings: Record<string, Witness[]> };
    stats: Record<string, unknown>;
  };
  // Nothing the run started outlives it.
  expect(processesMentioning(store), out).toEqual([]);
  const of = (p: number, f: string, type?: string) => history.filter((e) => e.process === p && e.f === f && (type === undefined || e.type === type));
  return {
    code,
    out,
    history,
    decisions,
    results,
    of,
    nemesis: (f: string) => history.filter((e) => e.process === "nemesis" && e.f === f),
    writesOf: (p: number) => decisions.filter((d) => d.process === p && d.op === "write"),
  };
}

export type Run = Awaited<ReturnType<typeof scenario>>;

/** The one completion (ok, fail or info) of process p's f. */
export const completion = (r: Awaited<ReturnType<typeof scenario>>, p: number, f: string): Event => {
  const done = r.of(p, f).filter((e) => e.type !== "invoke");
  expect(done, `completion of ${f} by process ${p}:\n${r.out}`).toHaveLength(1);
  return done[0];
};

/** Client 0's write, decided after client 1's though its fence is lower: the late write of a holder that outlived its lock. */
export function lateWrite(r: Awaited<ReturnType<typeof scenario>>): { late: Decision; next: Decision } {
  const [next] = r.writesOf(1);
  const [late] = r.writesOf(0);
  expect(late.fence!).toBeLessThan(next.fence!);
  expect(late.seq).toBeGreaterThan(next.seq);
  return { late, next };
}

/** The run found exactly the anomalies the catalogue predicts (exit 1), and said so. */
export function foundAsPredicted(r: Run, id: string, types: string[]): void {
  expect(r.code, r.out).toBe(1);
  expect(r.results.anomaly_types).toEqual(types);
  expect(r.out).toContain(`Scenario ${id}: found ${types.join(", ")}, as the catalogue predicts`);
}

/**
 * Client 1 was granted the lock only after client 0's release was sent. Not after
 * its ok arrived: the release takes effect between the two, and the grant's reply
 * may come first (a whole-suite run had it 6 ms before the release's).
 */
export function grantedAfterRelease(r: Run): void {
  const [releasing0] = r.of(0, "release", "invoke");
  const [acquire1] = r.of(1, "acquire", "ok");
  expect(acquire1.time, r.out).toBeGreaterThan(releasing0.time);
}
