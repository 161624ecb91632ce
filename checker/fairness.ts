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
import { ACQUIRE, type Paired } from "./paired.ts";
import { orderOf } from "./sweep.ts";
import { tailOf, type Tail } from "./tail.ts";
import { OK } from "./table.ts";

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

export type WaitTail = Tail;

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

/** First index of `sorted` after `k` whose value is > x, when sorted[k] is x. */
function after(sorted: Float64Array, k: number, x: number): number {
  let i = k + 1;
  while (i < sorted.length && sorted[i] <= x) i++;
  return i;
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
 * The waiters as columns. A large run has hundreds of thousands of acquires: as
 * objects, each property read in the counting below is a slow one.
 */
interface Columns {
  length: number;
  key: Int32Array;
  invoke: Float64Array;
  placed: Float64Array;
  granted: Float64Array;
  /** Integers in the order of `granted` (a model's completion event indexes), which sort faster than times; absent: `granted`. */
  grantOrder?: Float64Array;
}

function columns(n: number): Columns {
  return { length: n, key: new Int32Array(n), invoke: new Float64Array(n), placed: new Float64Array(0), granted: new Float64Array(n) };
}

function columnsOf(ws: readonly Waiter[]): Columns {
  const c = columns(ws.length);
  c.placed = new Float64Array(ws.length);
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i];
    c.key[i] = w.key;
    c.invoke[i] = w.invoke;
    c.placed[i] = w.placed;
    c.granted[i] = w.granted;
  }
  return c;
}

/**
 * Overtakes of the granted waiters of one key, O(n log n): in grant order, each
 * waiter A is overtaken by the waiters already granted whose invoke came after A
 * was placed.
 */
function overtakesOfKey(c: Columns, idx: Int32Array, overtakenBy: Int32Array): { overtakes: number; overtaken: number } {
  // The key's waiters copied out in their order: the loop below visits them in
  // grant order, and reading the run-wide columns so would miss the cache each time.
  const n = idx.length;
  const grants = new Float64Array(n);
  const invoked = new Float64Array(n);
  const placed = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    grants[k] = c.granted[idx[k]];
    invoked[k] = c.invoke[idx[k]];
    placed[k] = c.placed[idx[k]];
  }
  let byGrant: Int32Array;
  if (c.grantOrder) {
    const ranks = new Float64Array(n);
    for (let k = 0; k < n; k++) ranks[k] = c.grantOrder[idx[k]];
    byGrant = orderOf(ranks);
  } else byGrant = orderOf(grants);
  // Waiters come in invoke order from a model: then a waiter's rank among the
  // invokes is its position, and no search is needed to insert it.
  let inOrder = true;
  for (let k = 1; k < n && inOrder; k++) if (!(invoked[k - 1] <= invoked[k])) inOrder = false;
  const invokes = inOrder ? invoked : invoked.slice().sort();
  const seen = new Fenwick(n);
  let inserted = 0;
  let overtakes = 0, overtaken = 0;
  // Waiters granted at the same instant did not overtake each other: insert a group only after querying it.
  for (let g = 0; g < n;) {
    const at = grants[byGrant[g]];
    let end = g;
    while (end < n && grants[byGrant[end]] === at) end++;
    for (let j = g; j < end; j++) {
      const k = byGrant[j];
      const p = placed[k];
      const count = inserted - seen.below(inOrder && p === invoked[k] ? after(invokes, k, p) : upper(invokes, p));
      overtakenBy[idx[k]] = count;
      overtakes += count;
      if (count > 0) overtaken++;
    }
    for (let j = g; j < end; j++) {
      const k = byGrant[j];
      // Any position among equal invokes will do: a query splits them all alike.
      seen.add(inOrder ? k : upper(invokes, invoked[k]) - 1);
    }
    inserted += end - g;
    g = end;
  }
  return { overtakes, overtaken };
}

/** Fairness of a run's acquires; `keyNames` names the keys for `by_key`. */
export function fairnessOf(waiters: readonly Waiter[], keyNames: readonly string[] = []): Fairness {
  return fairnessOfColumns(columnsOf(waiters), keyNames);
}

function fairnessOfColumns(c: Columns, keyNames: readonly string[]): Fairness {
  const overtakenBy = new Int32Array(c.length);
  // The granted waiters of each key, keys in order of their first granted waiter.
  const keys: number[] = [];
  const counts: number[] = [];
  let placedReported = 0;
  for (let i = 0; i < c.length; i++) {
    if (Number.isNaN(c.granted[i])) continue;
    const key = c.key[i];
    if (counts[key] === undefined) {
      counts[key] = 0;
      keys.push(key);
    }
    counts[key]++;
    if (c.placed[i] !== c.invoke[i]) placedReported++;
  }
  const lists: Int32Array[] = [];
  for (const key of keys) {
    lists[key] = new Int32Array(counts[key]);
    counts[key] = 0;
  }
  for (let i = 0; i < c.length; i++) if (!Number.isNaN(c.granted[i])) lists[c.key[i]][counts[c.key[i]]++] = i;
  let overtakes = 0, overtaken = 0, granted = 0;
  const byKey: NonNullable<FairnessStats["by_key"]> = {};
  for (const key of keys) {
    const idx = lists[key];
    const o = overtakesOfKey(c, idx, overtakenBy);
    overtakes += o.overtakes;
    overtaken += o.overtaken;
    granted += idx.length;
    if (keys.length > 1) {
      byKey[keyNames[key] ?? String(key)] = {
        overtakes: o.overtakes, acquires_granted: idx.length, overtake_rate: round(o.overtakes / idx.length),
        overtaken: o.overtaken, wait_ms: tailOf(waitsOf(c, idx)),
      };
    }
  }
  const all = new Int32Array(granted);
  let a = 0;
  for (let i = 0; i < c.length; i++) if (!Number.isNaN(c.granted[i])) all[a++] = i;
  const stats: FairnessStats = {
    overtakes, acquires_granted: granted, overtake_rate: granted > 0 ? round(overtakes / granted) : 0,
    overtaken, wait_ms: tailOf(waitsOf(c, all)), placed_reported: placedReported,
  };
  if (keys.length > 1) stats.by_key = byKey;
  return { stats, overtakenBy };
}

function waitsOf(c: Columns, idx: Int32Array): Float64Array {
  const out = new Float64Array(idx.length);
  for (let k = 0; k < idx.length; k++) out[k] = (c.granted[idx[k]] - c.invoke[idx[k]]) / 1e6;
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
 * The waiters of a checked model, as columns. `queuedMs`, where the model keeps
 * it, is what each acquire's client reported as `queued_ms` in its ok value (NaN: nothing).
 */
function waitersOf(m: Paired, queuedMs?: (op: number) => number): Columns {
  const { ops } = m;
  let n = 0;
  for (let i = 0; i < ops.length; i++) if (ops.f[i] === ACQUIRE && ops.key[i] >= 0) n++;
  const c = columns(n);
  c.grantOrder = new Float64Array(n);
  // Without queued_ms every waiter is placed at its invoke: one column serves both
  // (a ten-million-event run has over a million acquires).
  c.placed = queuedMs ? new Float64Array(n) : c.invoke;
  let k = 0;
  for (let i = 0; i < ops.length; i++) {
    if (ops.f[i] !== ACQUIRE || ops.key[i] < 0) continue;
    const granted = ops.outcome[i] === OK ? ops.doneTime[i] : NaN;
    c.key[k] = ops.key[i];
    c.invoke[k] = ops.start[i];
    if (queuedMs) c.placed[k] = placedAt(ops.start[i], granted, queuedMs(i));
    c.granted[k] = granted;
    c.grantOrder[k] = ops.done[i];
    k++;
  }
  return c;
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
export function fairnessStats(m: Paired, queuedMs?: (op: number) => number): FairnessStats | null {
  const c = waitersOf(m, queuedMs);
  return c.length === 0 ? null : fairnessOfColumns(c, m.keys.names).stats;
}
