// The figures that say whether a run exercised anything: a valid verdict over a
// run with no successful acquire, no accepted write and no fault proves little.
import type { RunStats } from "../store/events.ts";
import type { Model } from "./model.ts";

const round = (x: number, places = 3): number => Number(x.toFixed(places));

/** Nearest-rank percentile of an ascending list. */
const percentile = (sorted: Float64Array, q: number): number => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];

/** A nemesis `f` that ends a fault rather than starting one. */
const endsFault = (f: string): boolean => f.startsWith("stop-") || f === "reset-clock" || f === "restart";

export function runStats(m: Model, leaseOverlaps: number): RunStats {
  const { events, ops, decisions } = m;
  const span = events.length > 1 ? events[events.length - 1].time - events[0].time : 0;
  const duration_s = span / 1e9;

  const perF: RunStats["ops"] = {};
  let completed = 0;
  let open = 0;
  const keys = new Set<string>();
  const processes = new Set<number>();
  const latencies: number[] = [];
  for (const op of ops) {
    const c = (perF[op.f] ??= { ok: 0, fail: 0, info: 0 });
    c[op.outcome]++;
    if (op.done) completed++;
    else open++;
    if (op.key !== undefined) keys.add(op.key);
    processes.add(op.process);
    if (op.f === "acquire" && op.outcome === "ok") latencies.push((op.end - op.start) / 1e6);
  }
  const sorted = Float64Array.from(latencies).sort();
  const acquire_latency_ms = sorted.length === 0 ? null
    : { p50: round(percentile(sorted, 0.5)), p99: round(percentile(sorted, 0.99)), max: round(sorted[sorted.length - 1]) };

  let writes_accepted = 0;
  let stale_writes_refused = 0;
  if (decisions) {
    for (const d of decisions) {
      if (d.op !== "write") continue;
      if (d.accepted) writes_accepted++;
      else stale_writes_refused++;
    }
  } else {
    for (const op of ops) {
      if (op.f !== "write") continue;
      if (op.outcome === "ok") writes_accepted++;
      else if (op.outcome === "fail" && op.done?.error === "stale-fence") stale_writes_refused++;
    }
  }

  const faults: Record<string, number> = {};
  for (const e of events) if (e.process === "nemesis" && !endsFault(e.f)) faults[e.f] = (faults[e.f] ?? 0) + 1;

  return {
    events: events.length,
    duration_s: round(duration_s),
    ops: perF,
    ops_per_s: duration_s > 0 ? round(completed / duration_s) : 0,
    acquire_latency_ms,
    writes_accepted,
    stale_writes_refused,
    lease_overlaps: leaseOverlaps,
    faults,
    holds: m.holds.length,
    keys: keys.size,
    processes: processes.size,
    open_at_end: open,
    resource_decisions: decisions ? decisions.length : null,
    write_order_from: decisions ? "resource.ndjson" : "history",
  };
}
