// renew: does a renew watchdog close the stale-holder window? The same pauses
// (SIGSTOP of a holder's worker, pause-min = pause-max = k x TTL, the same seed)
// with and without --renew (a renew every TTL/3), fencing off: stale writes per
// 1,000 holds against the pause's length. A watchdog keeps the lease alive only
// while its process runs; a pause longer than what is left of the lease still
// lets the next holder in, and the paused one writes when it wakes. The window
// narrows (short pauses no longer hurt) and never closes. Holds do --work ms
// (default 1.5 x TTL) before writing: the long holds a watchdog is for. Without
// it such a hold outlives its lease even unpaused (re-acquiring would be the
// alternative); with it only a pause longer than what is left of the lease does.
import { readFileSync } from "node:fs";
import { loadRun } from "../checker/index.ts";
import { pairOps } from "../reports/index.ts";
import type { HistoryEvent } from "../store/events.ts";
import { join, relative } from "node:path";
import type { OptionSpec } from "../lib/index.ts";
import type { Experiment, Findings } from "./experiment.ts";
import { backendOf, jepsen } from "./runs.ts";

const OPTIONS: readonly OptionSpec[] = [
  { name: "client", kind: "string", default: "redis", help: "the lock client (its backend is the one that runs it)" },
  { name: "ttl", kind: "int", default: 1000, min: 50, help: "lease TTL in ms" },
  { name: "pauses", kind: "list", default: ["0.25", "0.5", "0.8", "1", "1.5", "2", "4"], help: "pause lengths, as multiples of the TTL" },
  { name: "work", kind: "int", default: 1500, min: 0, help: "ms of work while holding: longer than the default TTL, the holds a watchdog is for (without one such a hold outlives its lease even unpaused)" },
  { name: "keys", kind: "int", default: 6, min: 1, help: "keys the clients spread over (as many as clients by default, so holds run side by side rather than queue on one key)" },
  { name: "time-limit", kind: "number", default: 20, min: 1, help: "seconds of operations per run" },
  { name: "concurrency", kind: "int", default: 6, min: 2, max: 200, help: "logical clients" },
  { name: "seed", kind: "int", default: 1, min: 0, help: "the same for every run, so both arms get the same fault schedule" },
];

interface Point {
  pause_x_ttl: number;
  renew: boolean;
  holds: number;
  writes: number;
  /** Writes sent after their hold's lease had certainly run out (its last grant's ok + TTL): the window. */
  stale_attempts: number;
  attempts_per_1000_holds: number;
  /** Writes the resource took with a fence below one it had already taken (fencing off: all accepted). */
  stale_writes: number;
  per_1000_holds: number;
  lease_overlaps: number;
  renews: { ok: number; fail: number };
  run: string;
}

/**
 * Writes sent after their hold's lease had certainly run out: later than the last
 * acquire or renew of that hold that returned ok, plus its TTL (the server set
 * the lease before it answered, so it ended by then). Each is a stale holder
 * acting, whether or not another holder's write beat it to the resource.
 */
function staleAttempts(events: HistoryEvent[]): number {
  // Each hold's lease ends by its latest grant's ok + TTL; writes are judged against
  // it in invoke order, so only the grants that came back before them count.
  const moments: Array<{ at: number; grant?: { owner: string; until: number }; write?: string }> = [];
  for (const op of pairOps(events).ops) {
    if (op.owner === undefined) continue;
    if (op.f === "write") moments.push({ at: op.invoke.time, write: op.owner });
    else if ((op.f === "acquire" || op.f === "renew") && op.outcome === "ok" && op.completion) {
      const ttl = Number(op.completion.value?.ttl_ms ?? op.invoke.value?.ttl_ms);
      if (Number.isFinite(ttl)) moments.push({ at: op.completion.time, grant: { owner: op.owner, until: op.completion.time + ttl * 1e6 } });
    }
  }
  moments.sort((a, b) => a.at - b.at);
  const until = new Map<string, number>();
  let stale = 0;
  for (const m of moments) {
    if (m.grant) until.set(m.grant.owner, m.grant.until);
    else if (m.write !== undefined && m.at > (until.get(m.write) ?? Infinity)) stale++;
  }
  return stale;
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
  quick: { pauses: ["0.5", "2"], "time-limit": 2 },
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
          "--work", String(o.work), "--keys", String(o.keys), "--concurrency", String(o.concurrency), "--time-limit", String(o["time-limit"]), "--seed", String(o.seed), "--store", ctx.runStore,
        ]);
        const stats = r.results.stats as { ops?: Record<string, { ok: number; fail: number }>; lease_overlaps?: number };
        const holds = stats.ops?.acquire?.ok ?? 0;
        const { writes, stale } = staleWrites(r.runDir);
        const attempts = staleAttempts((await loadRun(r.runDir)).events);
        const per1000 = (n: number) => (holds ? Math.round((n / holds) * 10000) / 10 : 0);
        points.push({
          pause_x_ttl: k, renew: renewOn, holds, writes, stale_attempts: attempts, attempts_per_1000_holds: per1000(attempts), stale_writes: stale, per_1000_holds: per1000(stale),
          lease_overlaps: stats.lease_overlaps ?? 0, renews: { ok: stats.ops?.renew?.ok ?? 0, fail: stats.ops?.renew?.fail ?? 0 }, run: relative(ctx.dir, r.runDir),
        });
      }
    }
    const arm = (on: boolean) => points.filter((p) => p.renew === on);
    const total = (on: boolean, f: (p: Point) => number) => arm(on).reduce((s, p) => s + f(p), 0);
    const clean = (on: boolean) => arm(on).filter((p) => p.stale_attempts === 0).map((p) => `${p.pause_x_ttl}`).join(", ") || "no length";
    return {
      summary: [
        `${client} on ${backend}, TTL ${ttl} ms, ${o.work} ms of work per hold, fencing off, the same pauses in both arms: ` +
          `${total(false, (p) => p.stale_attempts)} writes sent after their lease had run out without the watchdog, ${total(true, (p) => p.stale_attempts)} with it; ` +
          `${total(false, (p) => p.stale_writes)} and ${total(true, (p) => p.stale_writes)} of them landed after a later holder's write.`,
        `Pauses that left no stale attempt: ${clean(false)} x TTL without the watchdog, ${clean(true)} x TTL with it. A renew cannot run while its process is stopped: a pause longer than what is left of the lease still lets the next holder in.`,
      ],
      tables: [{
        title: "Stale writes per pause length",
        head: ["pause (x TTL)", "renew", "holds", "writes", "stale attempts", "per 1,000 holds", "stale writes accepted", "per 1,000 holds", "renews ok/fail", "run"],
        rows: points.map((p) => [p.pause_x_ttl, p.renew ? "on" : "off", p.holds, p.writes, p.stale_attempts, p.attempts_per_1000_holds, p.stale_writes, p.per_1000_holds, `${p.renews.ok}/${p.renews.fail}`, p.run]),
        note: "Stale attempt: a write sent after its hold's lease had certainly run out (its last acquire or renew ok + TTL). Stale write accepted: the resource took it with a fence below one it had already taken (fencing off, so all were taken). Both arms run the same seed, so the nemesis aims its pauses the same way.",
      }],
      plots: [{
        title: "Stale attempts and accepted stale writes per 1,000 holds against pause length",
        x: "pause length (x TTL)",
        y: "per 1,000 holds",
        series: [false, true].flatMap((on) => [
          { name: `attempts, renew ${on ? "on" : "off"}`, points: arm(on).map((p): [number, number] => [p.pause_x_ttl, p.attempts_per_1000_holds]) },
          { name: `accepted, renew ${on ? "on" : "off"}`, points: arm(on).map((p): [number, number] => [p.pause_x_ttl, p.per_1000_holds]) },
        ]),
      }],
      data: { client, backend, ttl_ms: ttl, points },
      runs: points.map((p) => p.run),
    };
  },
};
