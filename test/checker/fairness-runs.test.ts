// Fairness figures from real runs: ten clients on one hot key, no faults, one short
// test:jepsen per client type. etcd-queue serves its waiters in turn (arrival as
// checker/fairness.ts defines it, from the queued_ms its acquires report); the
// Redis client's SET NX retry loop does not.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fairnessOf, waitersOfHistory, type FairnessStats } from "../../checker/index.ts";
import type { HistoryEvent } from "../../store/events.ts";
import { latestRun, processesMentioning, readNdjson, runCli, tempRunDir, grantsIn } from "../helpers.ts";

const LOAD = ["--concurrency", "10", "--keys", "1", "--nemesis", "none", "--work", "10", "--acquire-timeout", "30000", "--seed", "5"];
// etcd commits every grant with an fsync, slow on a loaded machine: its runs are
// longer so that they still grant well over ten locks.
const TIME_LIMIT: Record<string, string> = { etcd: "6", redis: "3" };

async function run(backend: string, client: string) {
  const store = tempRunDir("fc-fair-");
  const cli = runCli("test", ["--backend", backend, "--client", client, ...LOAD, "--time-limit", TIME_LIMIT[backend], "--store", store]);
  const code = await cli.exit;
  const dir = latestRun(store);
  const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
  const events = readNdjson(join(dir, "history.ndjson")).slice(1) as unknown as HistoryEvent[];
  const { waiters, keys } = waitersOfHistory(events);
  return {
    code, out: cli.stdout() + cli.stderr(), store, events,
    stats: results.stats.fairness as FairnessStats,
    fromHistory: fairnessOf(waiters, keys).stats,
    html: readFileSync(join(dir, "report.html"), "utf8"),
  };
}

function expectFigures(r: Awaited<ReturnType<typeof run>>): void {
  expect(r.code, r.out).toBe(0);
  expect(r.stats.acquires_granted).toBeGreaterThan(10);
  expect(Number.isInteger(r.stats.overtakes)).toBe(true);
  const w = r.stats.wait_ms!;
  expect(w.p50).toBeLessThanOrEqual(w.p99);
  expect(w.p99).toBeLessThanOrEqual(w.max);
  expect(r.out).toMatch(/fairness: \d+ overtakes? over \d+ grants/);
  expect(r.html).toContain(`<svg class="fairness"`);
  expect(processesMentioning(r.store)).toEqual([]);
}

describe("fairness of a hot key", () => {
  it("etcd-queue: every waiter served in its turn", async () => {
    const r = await run("etcd", "etcd-queue");
    expectFigures(r);
    const oks = grantsIn(r.events);
    expect(oks.length).toBe(r.stats.acquires_granted);
    for (const e of oks) expect(typeof e.value?.queued_ms).toBe("number");
    expect(r.fromHistory.overtakes).toBe(0);
    expect(r.stats).toMatchObject({ overtakes: 0, placed_reported: r.stats.acquires_granted });
    // Everyone queued behind others: the waits are what a FIFO of ten makes them.
    expect(r.fromHistory.wait_ms!.max).toBeGreaterThan(0);
  });

  it("etcd3-lock: figures, no queue to report", async () => {
    const r = await run("etcd", "etcd3-lock");
    expectFigures(r);
    expect(r.stats.placed_reported).toBe(0);
    expect(r.stats.overtakes).toBe(r.fromHistory.overtakes);
  });

  it("redis: later arrivals overtake earlier waiters", async () => {
    const r = await run("redis", "redis");
    expectFigures(r);
    expect(r.stats.overtakes).toBeGreaterThan(0);
    expect(r.stats.overtakes).toBe(r.fromHistory.overtakes);
  });
});
