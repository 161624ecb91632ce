// The figures that say whether a run exercised anything: a valid verdict over a
// run with no successful acquire, no accepted write and no fault proves little.
import type { RunStats } from "../store/events.ts";
import { ACQUIRE, WRITE, type Paired } from "./paired.ts";
import { ACCEPTED, FAIL, OK, ProcessSlots, REFUSED } from "./table.ts";
import { tailOf } from "./tail.ts";

const round = (x: number, places = 3): number => Number(x.toFixed(places));

/** A nemesis `f` that ends a fault rather than starting one. */
const endsFault = (f: string): boolean => f.startsWith("stop-") || f === "reset-clock" || f === "restart";

export function runStats(m: Paired, leaseOverlaps: number): RunStats {
  const { ops, decisions } = m;
  const span = m.events > 1 ? m.lastTime - m.firstTime : 0;
  const duration_s = span / 1e9;

  // Per f and outcome; the figures list each f in order of its first invoke.
  const fs = m.fs.names.length;
  const counts = new Int32Array(fs * 3);
  const order: number[] = [];
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
    const outcome = ops.outcome[i];
    if (counts[f * 3] + counts[f * 3 + 1] + counts[f * 3 + 2] === 0) order.push(f);
    counts[f * 3 + outcome]++;
    if (ops.done[i] >= 0) completed++;
    const k = ops.key[i];
    if (k >= 0 && keySeen[k] === 0) {
      keySeen[k] = 1;
      keys++;
    }
    const p = ops.process[i];
    if (p !== lastProcess && seen.get(p) < 0) {
      seen.set(p, 1);
      processes++;
    }
    lastProcess = p;
    if (f === ACQUIRE && outcome === OK) latencies[l++] = (ops.endOf(i) - ops.start[i]) / 1e6;
  }
  const perF: RunStats["ops"] = {};
  for (const f of order) perF[m.fs.names[f]] = { ok: counts[f * 3], fail: counts[f * 3 + 1], info: counts[f * 3 + 2] };
  const acquire_latency_ms = tailOf(latencies);

  let writes_accepted = 0;
  let stale_writes_refused = 0;
  if (decisions) {
    for (let d = 0; d < decisions.length; d++) {
      if (!decisions.write[d]) continue;
      if (decisions.accepted[d] === ACCEPTED) writes_accepted++;
      else if (decisions.accepted[d] === REFUSED) stale_writes_refused++;
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
