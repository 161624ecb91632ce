// renew: does a renew watchdog close the stale-holder window? The same pauses
// (SIGSTOP of a holder's worker, pause-min = pause-max = k x TTL, the same seed)
// with and without --renew (a renew every TTL/3), fencing off: stale writes per
// 1,000 holds against the pause's length. A watchdog keeps the lease alive only
// while its process runs; a pause longer than what is left of the lease still
// lets the next holder in, and the paused one writes when it wakes. The window
// narrows (short pauses no longer hurt) and never closes. Holds do --work ms
// (default half the TTL) before writing: a hold much shorter than TTL/3 never
// reaches its first renew, and the two arms would not differ.
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { OptionSpec } from "../lib/index.ts";
import type { Experiment, Findings } from "./experiment.ts";
import { backendOf, jepsen } from "./runs.ts";

const OPTIONS: readonly OptionSpec[] = [
  { name: "client", kind: "string", default: "redis", help: "the lock client (its backend is the one that runs it)" },
  { name: "ttl", kind: "int", default: 1000, min: 50, help: "lease TTL in ms" },
  { name: "pauses", kind: "list", default: ["0.25", "0.5", "0.8", "1", "1.5", "2", "4"], help: "pause lengths, as multiples of the TTL" },
  { name: "work", kind: "int", default: 500, min: 0, help: "ms of work while holding (half the default TTL: long enough that a renew falls due in most holds)" },
  { name: "time-limit", kind: "number", default: 20, min: 1, help: "seconds of operations per run" },
  { name: "concurrency", kind: "int", default: 6, min: 2, max: 200, help: "logical clients" },
  { name: "seed", kind: "int", default: 1, min: 0, help: "the same for every run, so both arms get the same fault schedule" },
];

interface Point {
  pause_x_ttl: number;
  renew: boolean;
  holds: number;
  writes: number;
  /** Writes the resource took with a fence below one it had already taken (fencing off: all accepted). */
  stale_writes: number;
  per_1000_holds: number;
  lease_overlaps: number;
  renews: { ok: number; fail: number };
  run: string;
}

function staleWrites(runDir: string): { writes: number; stale: number } {
  let writes = 0;
  let stale = 0;
  for (const line of readFileSync(join(runDir, "resource.ndjson"), "utf8").split("\n")) {
    if (!line) continue;
    const d = JSON.parse(line) as { op: string; fence: number | null; max_before: number | null };
    if (d.op !== "write") continue;
    writes++;
    if (d.fence !== null && d.max_before !== null && d.fence < d.max_before) stale++;
  }
  return { writes, stale };
}

export const renew: Experiment = {
  name: "renew",
  title: "Renew versus re-acquire: stale writes against pause length, with and without the watchdog",
  describe: "the same SIGSTOP pauses with and without a renew watchdog (TTL/3), fencing off: stale writes per 1,000 holds against pause length",
  options: OPTIONS,
  quick: { pauses: ["0.5", "2"], "time-limit": 3 },
  async run(ctx): Promise<Findings> {
    const o = ctx.options;
    const client = String(o.client);
    const backend = backendOf(client);
    const ttl = o.ttl as number;
    const points: Point[] = [];
    for (const k of (o.pauses as string[]).map(Number)) {
      if (!(k > 0)) throw new Error(`--pauses: ${k} is not a positive multiple of the TTL`);
      const pauseMs = Math.max(1, Math.round(k * ttl));
      for (const renewOn of [false, true]) {
        ctx.log(`renew: pauses of ${pauseMs} ms (${k} x TTL), renew ${renewOn ? "on" : "off"} ...`);
        const r = await jepsen([
          "--backend", backend, "--client", client, "--nemesis", "pause", "--fence", "off", "--ttl", String(ttl),
          "--pause-min", String(pauseMs), "--pause-max", String(pauseMs), "--renew", renewOn ? "on" : "off",
          "--work", String(o.work), "--concurrency", String(o.concurrency), "--time-limit", String(o["time-limit"]), "--seed", String(o.seed), "--store", ctx.runStore,
        ]);
        const stats = r.results.stats as { ops?: Record<string, { ok: number; fail: number }>; lease_overlaps?: number };
        const holds = stats.ops?.acquire?.ok ?? 0;
        const { writes, stale } = staleWrites(r.runDir);
        points.push({
          pause_x_ttl: k, renew: renewOn, holds, writes, stale_writes: stale, per_1000_holds: holds ? Math.round((stale / holds) * 10000) / 10 : 0,
          lease_overlaps: stats.lease_overlaps ?? 0, renews: { ok: stats.ops?.renew?.ok ?? 0, fail: stats.ops?.renew?.fail ?? 0 }, run: relative(ctx.dir, r.runDir),
        });
      }
    }
    const arm = (on: boolean) => points.filter((p) => p.renew === on);
    const total = (on: boolean) => arm(on).reduce((s, p) => s + p.stale_writes, 0);
    return {
      summary: [
        `${client} on ${backend}, TTL ${ttl} ms, fencing off: ${total(false)} stale writes without the watchdog, ${total(true)} with it, over the same pauses.`,
        `With the watchdog, pauses of ${arm(true).filter((p) => p.stale_writes === 0).map((p) => `${p.pause_x_ttl}`).join(", ") || "no length"} x TTL left no stale write; ${arm(true).filter((p) => p.stale_writes > 0).map((p) => `${p.pause_x_ttl}`).join(", ") || "none"} x TTL still did: a renew cannot run while its process is stopped.`,
      ],
      tables: [{
        title: "Stale writes per pause length",
        head: ["pause (x TTL)", "renew", "holds", "writes", "stale writes", "per 1,000 holds", "lease overlaps", "renews ok/fail", "run"],
        rows: points.map((p) => [p.pause_x_ttl, p.renew ? "on" : "off", p.holds, p.writes, p.stale_writes, p.per_1000_holds, p.lease_overlaps, `${p.renews.ok}/${p.renews.fail}`, p.run]),
        note: "A stale write: the resource took it with a fence below one it had already taken (fencing off, so all were accepted). Both arms run the same seed, so the nemesis aims its pauses the same way.",
      }],
      plots: [{
        title: "Stale writes per 1,000 holds against pause length",
        x: "pause length (x TTL)",
        y: "stale writes per 1,000 holds",
        series: [false, true].map((on) => ({ name: on ? "renew on (TTL/3)" : "renew off", points: arm(on).map((p): [number, number] => [p.pause_x_ttl, p.per_1000_holds]) })),
      }],
      data: { client, backend, ttl_ms: ttl, points },
      runs: points.map((p) => p.run),
    };
  },
};
