// contention: one hot key and ever more contenders (50, 200, 1,000 by default,
// spread over the workers the machine takes), per lock client, with no fault and
// no proxy (--links direct; --via-proxy puts the fault proxy back to show its
// cost). For each: acquire latency p50/p99/p999, as measured and corrected for
// coordinated omission, grants per second, and the ceiling a mutex on one key
// cannot pass, 1 / (acquire + work + write + release), from the parts measured
// with a single contender. Where adding contenders stops adding throughput is
// where the curve flattens; the harness's own CPU and its workers' event-loop
// delay are shown beside it, so a
// flattening that is the harness's can be told from the lock's.
//
// Coordinated omission: each client offers attempts on an open timeline (--rate
// per client); a client still waiting when its next attempt falls due skips it
// (workloads/arrivals.ts), so a slow lock hides the attempts it delayed. The
// corrected percentiles add them back as HdrHistogram's recordValueWithExpectedInterval
// does: a wait of L with an interval I between attempts also counts L-I, L-2I, ...
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { cpus } from "node:os";
import { loadRun } from "../checker/index.ts";
import { pairOps } from "../reports/index.ts";
import type { OptionSpec } from "../lib/index.ts";
import type { HistoryEvent } from "../store/events.ts";
import type { Experiment, Findings } from "./experiment.ts";
import { sampleCpu } from "./proc.ts";
import { backendOf, jepsen } from "./runs.ts";

const OPTIONS: readonly OptionSpec[] = [
  { name: "clients", kind: "list", default: ["redis", "redlock", "etcd-queue", "etcd3-lock"], help: "lock clients, each on its own backend" },
  { name: "contenders", kind: "list", default: ["50", "200", "1000"], help: "logical clients on the one key, one run each" },
  { name: "workers", kind: "int", default: Math.max(1, cpus().length), min: 1, max: 64, help: "worker processes the contenders are spread over (default: one per core)" },
  { name: "time-limit", kind: "number", default: 15, min: 1, help: "seconds of operations per run" },
  { name: "work", kind: "int", default: 10, min: 0, help: "ms of work while holding" },
  // Long: no fault here ends a lease, and a queue's waiters hold leases too (etcd-queue's
  // expire while they wait when the queue is longer than the TTL).
  { name: "ttl", kind: "int", default: 30_000, min: 100, help: "lease TTL in ms (long: throughput, not expiry, is measured)" },
  { name: "rate", kind: "number", default: 2, min: 0.01, help: "attempts per second each contender offers (open model)" },
  { name: "connections", kind: "string", default: "per-worker", choices: ["per-worker", "per-client"], help: "etcd clients: one etcd3 client shared by a worker's contenders (default: a thousand gRPC clients in one process stalled its event loop for seconds), or one each" },
  { name: "via-proxy", kind: "flag", default: false, help: "through the fault proxy (--links proxy), to show its cost; default: direct" },
  { name: "seed", kind: "int", default: 1, min: 0, help: "the same for every run" },
];

/** Exact percentile of sorted values (nearest rank). */
function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** HdrHistogram's correction: a value L with an expected interval I also stands for L-I, L-2I, ... down to I. */
function corrected(values: number[], intervalMs: number): number[] {
  const out: number[] = [];
  for (const v of values) {
    out.push(v);
    for (let missing = v - intervalMs; missing >= intervalMs; missing -= intervalMs) out.push(missing);
  }
  return out.sort((a, b) => a - b);
}

interface Latencies {
  acquire: number[];
  write: number[];
  release: number[];
  okTimes: number[];
  fail: number;
  info: number;
}

/** Invoke-to-completion times of the client operations, in ms, from a history (paired as the reports pair them). */
function latencies(events: HistoryEvent[]): Latencies {
  const out: Latencies = { acquire: [], write: [], release: [], okTimes: [], fail: 0, info: 0 };
  for (const op of pairOps(events).ops) {
    if (op.f === "acquire" && op.outcome !== "ok") op.outcome === "fail" ? out.fail++ : out.info++;
    if (op.outcome !== "ok" || !op.completion) continue;
    const ms = (op.completion.time - op.invoke.time) / 1e6;
    if (op.f === "acquire") {
      out.acquire.push(ms);
      out.okTimes.push(op.completion.time);
    } else if (op.f === "write" || op.f === "release") out[op.f].push(ms);
  }
  for (const k of ["acquire", "write", "release"] as const) out[k].sort((a, b) => a - b);
  out.okTimes.sort((a, b) => a - b);
  return out;
}

const round = (v: number): number => (Number.isFinite(v) ? (v >= 100 ? Math.round(v) : Math.round(v * 10) / 10) : NaN);

export const contention: Experiment = {
  name: "contention",
  title: "Contention on one hot key: latency and throughput against contenders, per lock client",
  describe: "one hot key, 50/200/1000 contenders, no faults and no proxy: acquire p50/p99/p999 (measured and corrected for coordinated omission), grants/s against the ceiling 1/(acquire+work+write+release), the harness's CPU",
  options: OPTIONS,
  quick: { clients: ["redis"], contenders: ["10"], "time-limit": 2 },
  async run(ctx): Promise<Findings> {
    const o = ctx.options;
    const counts = (o.contenders as string[]).map(Number);
    for (const n of counts) if (!Number.isInteger(n) || n < 1 || n > 1000) throw new Error(`--contenders: ${n} is not a whole number from 1 to 1000`);
    const links = o["via-proxy"] ? "proxy" : "direct";
    const rate = o.rate as number;
    const intervalMs = 1000 / rate;
    const rows: Array<Record<string, unknown>> = [];
    const runs: string[] = [];
    const run = async (client: string, n: number) => {
      const backend = backendOf(client);
      const workers = Math.min(o.workers as number, n);
      ctx.log(`contention: ${client} on ${backend}, ${n} contender${n === 1 ? "" : "s"} over ${workers} worker${workers === 1 ? "" : "s"} for ${o["time-limit"]} s (links ${links}) ...`);
      let cpu: ReturnType<typeof sampleCpu> | null = null;
      const r = await jepsen(
        ["--backend", backend, "--client", client, "--keys", "1", "--nemesis", "none", "--links", links, "--concurrency", String(n), "--workers", String(workers),
          "--work", String(o.work), "--ttl", String(o.ttl), "--rate", String(rate), "--acquire-timeout", String(Math.round((o["time-limit"] as number) * 1000)),
          "--time-limit", String(o["time-limit"]), "--seed", String(o.seed), "--store", ctx.runStore,
          ...(backend === "etcd" ? ["--connections", String(o.connections)] : [])],
        undefined,
        (pid) => (cpu = sampleCpu(pid)),
      );
      const harness = (cpu as ReturnType<typeof sampleCpu> | null)?.stop() ?? null;
      runs.push(relative(ctx.dir, r.runDir));
      const { events } = await loadRun(r.runDir);
      // Each worker's event-loop delay while its clients ran (run.json): the worst of them.
      const lags = Object.values((JSON.parse(readFileSync(join(r.runDir, "run.json"), "utf8")) as { event_loop_delay_ms?: Record<string, { p99: number; max: number }> }).event_loop_delay_ms ?? {});
      const lag = lags.length ? { p99: Math.max(...lags.map((l) => l.p99)), max: Math.max(...lags.map((l) => l.max)) } : null;
      return { lat: latencies(events), harness, lag, run: relative(ctx.dir, r.runDir), code: r.code };
    };
    for (const client of o.clients as string[]) {
      // The parts of one hold, unhurried: a single contender.
      const solo = await run(client, 1);
      const parts = { acquire: pct(solo.lat.acquire, 50), work: o.work as number, write: pct(solo.lat.write, 50), release: pct(solo.lat.release, 50) };
      const ceiling = 1000 / (parts.acquire + parts.work + parts.write + parts.release);
      for (const n of counts) {
        const m = await run(client, n);
        const t = m.lat.okTimes;
        const span = t.length > 1 ? (t[t.length - 1] - t[0]) / 1e9 : NaN;
        const grants = t.length > 1 ? (t.length - 1) / span : 0;
        const co = corrected(m.lat.acquire, intervalMs);
        rows.push({
          client, contenders: n, grants: t.length, grants_per_s: round(grants), ceiling_per_s: round(ceiling), // Three places: round() keeps one, which showed 93.5% as 90%.
          of_ceiling: Math.round((grants / ceiling) * 1000) / 1000,
          acquire_ms: { p50: round(pct(m.lat.acquire, 50)), p99: round(pct(m.lat.acquire, 99)), p999: round(pct(m.lat.acquire, 99.9)) },
          acquire_corrected_ms: { p50: round(pct(co, 50)), p99: round(pct(co, 99)), p999: round(pct(co, 99.9)), samples: co.length },
          acquires_failed: m.lat.fail, acquires_unknown: m.lat.info, parts_ms: parts, harness_cpu: m.harness, event_loop_delay_ms: m.lag, exit_code: m.code, run: m.run,
        });
      }
    }
    const num = (v: unknown): number => v as number;
    return {
      summary: [
        `One hot key, links ${links}${links === "direct" ? " (clients talk to the servers with no proxy between)" : " (through the fault proxy: its cost is in every figure)"}, ${o.work} ms of work per hold, ${rate} attempts/s offered per contender.` +
          ((o.clients as string[]).some((c) => backendOf(c) === "etcd") ? ` etcd clients: ${o.connections === "per-worker" ? "one etcd3 client per worker, shared by its contenders" : "one etcd3 client per contender"} (--connections ${o.connections}).` : ""),
        ...(o.clients as string[]).map((c) => {
          const mine = rows.filter((r) => r.client === c);
          return `${c}: ceiling ${mine[0]?.ceiling_per_s} grants/s; ${mine.map((r) => `${r.contenders} contenders ${r.grants_per_s}/s (${Math.round(num(r.of_ceiling) * 100)}%)`).join(", ")}.`;
        }),
      ],
      tables: [{
        title: "Throughput and acquire latency by contenders",
        head: ["client", "contenders", "grants/s", "ceiling/s", "of ceiling", "acquire p50/p99/p999 ms", "corrected p50/p99/p999 ms", "failed/unknown", "harness CPU mean/peak %", "servers CPU mean/peak %", "event-loop delay p99/max ms", "run"],
        rows: rows.map((r) => {
          const a = r.acquire_ms as Record<string, number>;
          const c = r.acquire_corrected_ms as Record<string, number>;
          const h = r.harness_cpu as { mean_pct: number; peak_pct: number; servers: { mean_pct: number; peak_pct: number } } | null;
          return [String(r.client), num(r.contenders), num(r.grants_per_s), num(r.ceiling_per_s), `${Math.round(num(r.of_ceiling) * 100)}%`, `${a.p50} / ${a.p99} / ${a.p999}`,
            `${c.p50} / ${c.p99} / ${c.p999}`, `${r.acquires_failed}/${r.acquires_unknown}`, h ? `${h.mean_pct} / ${h.peak_pct}` : "n/a", h ? `${h.servers.mean_pct} / ${h.servers.peak_pct}` : "n/a",
            r.event_loop_delay_ms ? `${(r.event_loop_delay_ms as { p99: number }).p99} / ${(r.event_loop_delay_ms as { max: number }).max}` : "n/a", String(r.run)];
        }),
        note: "ceiling = 1000 / (acquire + work + write + release) ms, the parts' medians from a run with one contender. Corrected: each wait also counts the attempts it made its client skip (HdrHistogram's expected-interval correction, interval 1/rate). Harness CPU: the runner, its workers, the resource and the fault proxy, % of one core (this machine has " + cpus().length + "); servers: the lock servers (redis-server, etcd), apart. Event-loop delay: the worst worker's, while its clients ran.",
      }],
      plots: [
        { title: "Grants per second against contenders", x: "contenders", y: "grants/s", logX: true, series: (o.clients as string[]).map((c) => ({ name: c, points: rows.filter((r) => r.client === c).map((r): [number, number] => [num(r.contenders), num(r.grants_per_s)]) })) },
        { title: "Acquire p99 (corrected) against contenders", x: "contenders", y: "ms", logX: true, series: (o.clients as string[]).map((c) => ({ name: c, points: rows.filter((r) => r.client === c).map((r): [number, number] => [num(r.contenders), (r.acquire_corrected_ms as Record<string, number>).p99]) })) },
        { title: "Harness CPU against contenders", x: "contenders", y: "% of one core (mean)", logX: true, series: (o.clients as string[]).map((c) => ({ name: c, points: rows.filter((r) => r.client === c && r.harness_cpu).map((r): [number, number] => [num(r.contenders), (r.harness_cpu as { mean_pct: number }).mean_pct]) })) },
        { title: "Lock servers' CPU against contenders", x: "contenders", y: "% of one core (mean)", logX: true, series: (o.clients as string[]).map((c) => ({ name: c, points: rows.filter((r) => r.client === c && r.harness_cpu).map((r): [number, number] => [num(r.contenders), (r.harness_cpu as { servers: { mean_pct: number } }).servers.mean_pct]) })) },
        { title: "Worker event-loop delay p99 against contenders", x: "contenders", y: "ms", logX: true, series: (o.clients as string[]).map((c) => ({ name: c, points: rows.filter((r) => r.client === c && r.event_loop_delay_ms).map((r): [number, number] => [num(r.contenders), (r.event_loop_delay_ms as { p99: number }).p99]) })) },
      ],
      data: { links, rate, work_ms: o.work, rows },
      runs,
    };
  },
};
