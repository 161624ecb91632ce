// fairness: many clients on one hot key, no faults, each client run once with the
// same load and seed; their overtakes (a later arrival granted before an earlier
// waiter) and wait tails side by side (issue 5: etcd-queue serves waiters in turn,
// a SET NX retry loop does not). Counted with the checker's own count
// (checker/fairness.ts), once with arrivals as defined there (a waiter's place,
// from its client's queued_ms) and once taking every invoke as the arrival, to show
// how many apparent overtakes are only requests that were in flight together.
import { fairnessOf, loadRun, waitersOfHistory } from "../checker/index.ts";
import { CLIENTS } from "../backends/index.ts";
import type { OptionSpec } from "../lib/index.ts";
import type { Experiment, Findings } from "./experiment.ts";
import { backendOf, jepsen } from "./runs.ts";
import { relative } from "node:path";

const OPTIONS: readonly OptionSpec[] = [
  { name: "clients", kind: "list", default: ["etcd-queue", "etcd3-lock", "redis"], choices: Object.keys(CLIENTS), help: "lock clients to compare, each on its own backend" },
  { name: "concurrency", kind: "int", default: 50, min: 2, max: 1000, help: "logical clients, all on the one key" },
  { name: "time-limit", kind: "number", default: 15, min: 1, help: "seconds of operations per run" },
  { name: "work", kind: "int", default: 10, min: 0, help: "ms of work while holding" },
  // Long enough that no waiter gives up: a waiter that gives up is not counted as overtaken.
  { name: "acquire-timeout", kind: "int", default: 60_000, min: 0, help: "ms a waiter keeps trying" },
  { name: "seed", kind: "int", default: 1, min: 0, help: "the same for every run" },
];

const ms = (v: number | undefined): string => (v === undefined ? "n/a" : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(1)} ms`);

export const fairness: Experiment = {
  name: "fairness",
  title: "Fairness on one hot key: overtakes and wait tails per lock client",
  describe: "many clients on one key, no faults: how often a later arrival is granted before an earlier waiter, and the wait tail, per client",
  options: OPTIONS,
  quick: { clients: ["etcd-queue", "redis"], concurrency: 8, "time-limit": 3 },
  async run(ctx): Promise<Findings> {
    const o = ctx.options;
    const common = ["--keys", "1", "--nemesis", "none", "--concurrency", String(o.concurrency), "--time-limit", String(o["time-limit"]),
      "--work", String(o.work), "--acquire-timeout", String(o["acquire-timeout"]), "--seed", String(o.seed), "--store", ctx.runStore];
    const rows: Array<Record<string, unknown>> = [];
    const runs: string[] = [];
    for (const client of o.clients as string[]) {
      const backend = backendOf(client);
      ctx.log(`fairness: ${client} on ${backend}, ${o.concurrency} clients for ${o["time-limit"]} s ...`);
      const r = await jepsen(["--backend", backend, "--client", client, ...common]);
      runs.push(relative(ctx.dir, r.runDir));
      const { events } = await loadRun(r.runDir);
      const count = (byPlace: boolean) => {
        const { waiters, keys } = waitersOfHistory(events, byPlace);
        return fairnessOf(waiters, keys).stats;
      };
      rows.push({ client, backend, exit_code: r.code, fairness: count(true), by_invoke: count(false), run: relative(ctx.dir, r.runDir) });
    }
    type F = ReturnType<typeof fairnessOf>["stats"];
    const f = (r: Record<string, unknown>) => r.fairness as F;
    return {
      summary: rows.map((r) => `${r.client}: ${f(r).overtakes} overtakes over ${f(r).acquires_granted} grants (${f(r).overtake_rate} per grant), wait p99 ${ms(f(r).wait_ms?.p99)}.`),
      tables: [{
        title: "Overtakes and waits",
        head: ["client", "backend", "granted", "overtakes", "per grant", "overtaken", "by invoke", "wait p50", "wait p99", "wait max", "verdict"],
        rows: rows.map((r) => [String(r.client), String(r.backend), f(r).acquires_granted, f(r).overtakes, f(r).overtake_rate, f(r).overtaken, (r.by_invoke as F).overtakes,
          ms(f(r).wait_ms?.p50), ms(f(r).wait_ms?.p99), ms(f(r).wait_ms?.max), r.exit_code === 0 ? "valid" : `exit ${r.exit_code}`]),
        note: "by invoke: the overtakes if every invoke were an arrival (requests in flight together counted as ordered).",
      }],
      plots: [],
      data: { rows },
      runs,
    };
  },
};
