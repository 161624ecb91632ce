// Fairness: whether the lock served its waiters in the order they arrived. Not a
// safety property (nothing here makes a run invalid), but what a user choosing
// between a queue (etcd's revisions) and a retry loop (SET NX) wants to see.
//
// Arrival, precisely. A waiter arrives when its request takes its place at the lock
// service, and the history cannot see that moment: it lies between the acquire's
// invoke and the answer to the request that took the place. Two waiters whose
// requests were in flight together have no order a client could have relied on
// (B's request may reach etcd first although A was invoked first, and then B is
// ahead of A in the queue, which is FIFO by etcd's order, not by ours). So A counts
// as arrived before B only when A's place was certainly taken before B was invoked:
// by A's invoke plus the `queued_ms` its client reports in the acquire's ok (how long
// after the acquire began the request that took its place was answered; etcd-queue:
// its key's put), or by A's invoke where the client reports none (Redis SET NX, the
// etcd3 package's lock: they keep no place, every retry races afresh, so their first
// request is their arrival). The client starts its clock a few microseconds after
// the invoke is stamped, so A's answer may come those microseconds later than this
// says; a B invoked within them still needs a network trip before its request is
// applied, and A's was applied by then.
//
// An overtake is then one pair (A, B) on one key: A certainly arrived before B was
// invoked, B was granted (acquire ok) before A was, and A was granted later. Waiters
// that gave up (fail) or whose outcome is unknown (info) are not counted as
// overtaken: a waiter that gives up leaves the queue at a moment the history does
// not show (etcd-queue revokes its lease, and only then records the fail), so a
// grant just before its fail cannot be told from an overtake; and a waiter that
// times out is measured by the acquire's timeout, not by the order of grants.
import type { HistoryEvent } from "../store/events.ts";
import { OK } from "./table.ts";
import type { Model } from "./model.ts";

/** One acquire of one key, as fairness sees it; times in ns on the run's clock. */
export interface Waiter {
  /** Acquires of different keys never overtake each other. */
  key: number;
  invoke: number;
  /** When its place was certainly taken: invoke + queued_ms, or invoke when none was reported. */
  placed: number;
  /** Its acquire ok (NaN: never granted). */
  granted: number;
}

export interface WaitTail {
  p50: number;
  p99: number;
  max: number;
}

export interface FairnessStats {
  /** Pairs (earlier waiter, later arrival) where the later arrival was granted first. */
  overtakes: number;
  acquires_granted: number;
  /** Overtakes per granted acquire (0 for a FIFO lock; it can exceed 1). */
  overtake_rate: number;
  /** Granted acquires that at least one later arrival overtook. */
  overtaken: number;
  /** acquire ok time minus invoke time of the granted acquires, in ms (null: none). */
  wait_ms: WaitTail | null;
  /** Granted acquires whose client said when it took its place (queued_ms). */
  placed_reported: number;
  /** The same figures per key, when the run used more than one. */
  by_key?: Record<string, Omit<FairnessStats, "by_key" | "placed_reported">>;
}

export interface Fairness {
  stats: FairnessStats;
  /** Per waiter, in the order given: how many later arrivals were granted before it. */
  overtakenBy: Int32Array;
}

const round = (x: number): number => Number(x.toFixed(3));

/** Nearest-rank percentile of an ascending list. */
const rank = (sorted: Float64Array, q: number): number => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];

function tail(waitsMs: Float64Array): WaitTail | null {
  if (waitsMs.length === 0) return null;
  const s = waitsMs.sort();
  return { p50: round(rank(s, 0.5)), p99: round(rank(s, 0.99)), max: round(s[s.length - 1]) };
}

/** Counts of inserted values, queried by rank: O(log n) each. */
class Fenwick {
  private readonly t: Int32Array;
  constructor(n: number) {
    this.t = new Int32Array(n + 1);
  }
  add(i: number): void {
    for (i++; i < this.t.length; i += i & -i) this.t[i]++;
  }
  /** How many inserted ranks are < i. */
  below(i: number): number {
    let s = 0;
    for (; i > 0; i -= i & -i) s += this.t[i];
    return s;
  }
}

/** First index of `sorted` whose value is > x. */
function upper(sorted: Float64Array, x: number): number {
  let lo = 0, hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Overtakes of the granted waiters of one key, O(n log n): in grant order, each
 * waiter A is overtaken by the waiters already granted whose invoke came after A
 * was placed.
 */
function overtakesOfKey(ws: readonly Waiter[], idx: number[], overtakenBy: Int32Array): { overtakes: number; overtaken: number } {
  // Keys read once into typed arrays: a comparator or a mapping over objects costs
  // several times more on the hundreds of thousands of acquires of a large run.
  const grants = new Float64Array(idx.length);
  const invokes = new Float64Array(idx.length);
  for (let k = 0; k < idx.length; k++) {
    grants[k] = ws[idx[k]].granted;
    invokes[k] = ws[idx[k]].invoke;
  }
  const byGrant = idx.map((_, k) => k).sort((x, y) => grants[x] - grants[y]).map((k) => idx[k]);
  invokes.sort();
  const seen = new Fenwick(invokes.length);
  let overtakes = 0, overtaken = 0;
  // Waiters granted at the same instant did not overtake each other: insert a group only after querying it.
  for (let g = 0; g < byGrant.length;) {
    let end = g;
    while (end < byGrant.length && ws[byGrant[end]].granted === ws[byGrant[g]].granted) end++;
    for (let j = g; j < end; j++) {
      const a = byGrant[j];
      const n = seen.below(invokes.length) - seen.below(upper(invokes, ws[a].placed));
      overtakenBy[a] = n;
      overtakes += n;
      if (n > 0) overtaken++;
    }
    for (let j = g; j < end; j++) seen.add(upper(invokes, ws[byGrant[j]].invoke) - 1);
    g = end;
  }
  return { overtakes, overtaken };
}

/** Fairness of a run's acquires; `keyNames` names the keys for `by_key`. */
export function fairnessOf(waiters: readonly Waiter[], keyNames: readonly string[] = []): Fairness {
  const overtakenBy = new Int32Array(waiters.length);
  const grantedOf = new Map<number, number[]>();
  let placedReported = 0;
  for (let i = 0; i < waiters.length; i++) {
    const w = waiters[i];
    if (Number.isNaN(w.granted)) continue;
    let list = grantedOf.get(w.key);
    if (!list) grantedOf.set(w.key, (list = []));
    list.push(i);
    if (w.placed !== w.invoke) placedReported++;
  }
  let overtakes = 0, overtaken = 0, granted = 0;
  const all: number[] = [];
  const byKey: NonNullable<FairnessStats["by_key"]> = {};
  for (const [key, idx] of grantedOf) {
    const o = overtakesOfKey(waiters, idx, overtakenBy);
    overtakes += o.overtakes;
    overtaken += o.overtaken;
    granted += idx.length;
    for (const i of idx) all.push(i);
    if (grantedOf.size > 1) {
      byKey[keyNames[key] ?? String(key)] = {
        overtakes: o.overtakes, acquires_granted: idx.length, overtake_rate: round(o.overtakes / idx.length),
        overtaken: o.overtaken, wait_ms: tail(waitsOf(waiters, idx)),
      };
    }
  }
  const stats: FairnessStats = {
    overtakes, acquires_granted: granted, overtake_rate: granted > 0 ? round(overtakes / granted) : 0,
    overtaken, wait_ms: tail(waitsOf(waiters, all)), placed_reported: placedReported,
  };
  if (grantedOf.size > 1) stats.by_key = byKey;
  return { stats, overtakenBy };
}

function waitsOf(ws: readonly Waiter[], idx: readonly number[]): Float64Array {
  const out = new Float64Array(idx.length);
  for (let k = 0; k < idx.length; k++) out[k] = (ws[idx[k]].granted - ws[idx[k]].invoke) / 1e6;
  return out;
}

/**
 * When a waiter's place was certainly taken (ns): its invoke plus the `queued_ms`
 * its client reported in the acquire's ok value, never after its grant; its invoke
 * when the client reported none (or nothing usable).
 */
export function placedAt(invoke: number, granted: number, queuedMs: unknown): number {
  if (typeof queuedMs !== "number" || !Number.isFinite(queuedMs) || queuedMs < 0 || Number.isNaN(granted)) return invoke;
  return Math.min(invoke + queuedMs * 1e6, granted);
}

/**
 * The waiters of a checked model. `queuedMs`, where the model keeps it, is what
 * each acquire's client reported as `queued_ms` in its ok value (NaN: nothing).
 */
export function waitersOf(m: Model, queuedMs?: (op: number) => number): Waiter[] {
  const { ops } = m;
  const acquire = m.fs.names.indexOf("acquire");
  const out: Waiter[] = [];
  for (let i = 0; i < ops.length; i++) {
    if (ops.f[i] !== acquire || ops.key[i] < 0) continue;
    const granted = ops.outcome[i] === OK ? ops.doneTime[i] : NaN;
    out.push({ key: ops.key[i], invoke: ops.start[i], placed: placedAt(ops.start[i], granted, queuedMs?.(i)), granted });
  }
  return out;
}

/**
 * The waiters of a whole history in memory, with the `queued_ms` of each acquire's
 * ok (`byPlace` false: every waiter placed at its invoke, for comparison).
 */
export function waitersOfHistory(events: readonly HistoryEvent[], byPlace = true): { waiters: Waiter[]; keys: string[] } {
  const keys: string[] = [];
  const keyIds = new Map<string, number>();
  const open = new Map<number, Waiter>();
  const waiters: Waiter[] = [];
  for (const e of events) {
    if (typeof e.process !== "number" || e.f !== "acquire") continue;
    if (e.type === "invoke") {
      if (e.key === undefined) continue;
      let key = keyIds.get(e.key);
      if (key === undefined) keyIds.set(e.key, (key = keys.push(e.key) - 1));
      const w: Waiter = { key, invoke: e.time, placed: e.time, granted: NaN };
      open.set(e.process, w);
      waiters.push(w);
      continue;
    }
    const w = open.get(e.process);
    open.delete(e.process);
    if (!w || e.type !== "ok") continue;
    w.granted = e.time;
    if (byPlace) w.placed = placedAt(w.invoke, w.granted, e.value?.queued_ms);
  }
  return { waiters, keys };
}

/**
 * results.json's `stats.fairness`, or null when the history has no acquire.
 * `queuedMs`: each acquire's reported `queued_ms`, where the model keeps it.
 */
export function fairnessStats(m: Model, queuedMs?: (op: number) => number): FairnessStats | null {
  const ws = waitersOf(m, queuedMs);
  return ws.length === 0 ? null : fairnessOf(ws, m.keys.names).stats;
}
