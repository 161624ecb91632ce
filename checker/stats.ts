// The figures that say whether a run exercised anything: a valid verdict over a
// run with no successful acquire, no accepted write and no fault proves little.
import type { RunStats } from "../store/events.ts";
import { ACQUIRE, WRITE, type Model } from "./model.ts";
import { FAIL, OK, OUTCOMES, ProcessSlots } from "./table.ts";

const round = (x: number, places = 3): number => Number(x.toFixed(places));

/** Nearest-rank percentile of an ascending list. */
const percentile = (sorted: Float64Array, q: number): number => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];

/** A nemesis `f` that ends a fault rather than starting one. */
const endsFault = (f: string): boolean => f.startsWith("stop-") || f === "reset-clock" || f === "restart";

export function runStats(m: Model, leaseOverlaps: number): RunStats {
  const { ops, decisions } = m;
  const span = m.events > 1 ? m.lastTime - m.firstTime : 0;
  const duration_s = span / 1e9;

  // Per f, in order of first invoke, as the operations come.
  const counts: Int32Array[] = [];
  const perF: RunStats["ops"] = {};
  let completed = 0;
  const keySeen = new Uint8Array(m.keys.names.length);
  let keys = 0;
  const seen = new ProcessSlots();
  let processes = 0;
  let acquiresOk = 0;
  for (let i = 0; i < ops.length; i++) if (ops.f[i] === ACQUIRE && ops.outcome[i] === OK) acquiresOk++;
  const latencies = new Float64Array(acquiresOk);
  let l = 0;
  let lastProcess = NaN;
  for (let i = 0; i < ops.length; i++) {
    const f = ops.f[i];
    if (!counts[f]) {
      counts[f] = new Int32Array(3);
      perF[m.fs.names[f]] = { ok: 0, fail: 0, info: 0 };
    }
    counts[f][ops.outcome[i]]++;
    if (ops.done[i] >= 0) completed++;
    const k = ops.key[i];
    if (k >= 0 && !keySeen[k]) {
      keySeen[k] = 1;
      keys++;
    }
    const p = ops.process[i];
    if (p !== lastProcess && seen.get(p) < 0) {
      seen.set(p, 1);
      processes++;
    }
    lastProcess = p;
    if (f === ACQUIRE && ops.outcome[i] === OK) latencies[l++] = (ops.end[i] - ops.start[i]) / 1e6;
  }
  for (let f = 0; f < counts.length; f++) {
    const c = counts[f];
    if (!c) continue;
    const entry = perF[m.fs.names[f]];
    for (let o = 0; o < 3; o++) entry[OUTCOMES[o]] = c[o];
  }
  const sorted = latencies.sort();
  const acquire_latency_ms = sorted.length === 0 ? null
    : { p50: round(percentile(sorted, 0.5)), p99: round(percentile(sorted, 0.99)), max: round(sorted[sorted.length - 1]) };

  let writes_accepted = 0;
  let stale_writes_refused = 0;
  if (decisions) {
    for (let d = 0; d < decisions.length; d++) {
      if (!decisions.write[d]) continue;
      if (decisions.accepted[d]) writes_accepted++;
      else stale_writes_refused++;
    }
  } else {
    const stale = m.errors.names.indexOf("stale-fence");
    for (let i = 0; i < ops.length; i++) {
      if (ops.f[i] !== WRITE) continue;
      if (ops.outcome[i] === OK) writes_accepted++;
      else if (ops.outcome[i] === FAIL && stale >= 0 && ops.error[i] === stale) stale_writes_refused++;
    }
  }

  const faults: Record<string, number> = {};
  for (const [f, n] of m.nemesis) if (!endsFault(f)) faults[f] = n;

  return {
    events: m.events,
    duration_s: round(duration_s),
    ops: perF,
    ops_per_s: duration_s > 0 ? round(completed / duration_s) : 0,
    acquire_latency_ms,
    writes_accepted,
    stale_writes_refused,
    lease_overlaps: leaseOverlaps,
    faults,
    holds: m.holds.length,
    keys,
    processes,
    open_at_end: ops.length - completed,
    resource_decisions: decisions ? decisions.length : null,
    write_order_from: decisions ? "resource.ndjson" : "history",
  };
}
