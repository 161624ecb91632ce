// resource.ndjson as the analyses use it: its decisions per key in the order they
// were made (the order writes took effect), the fences in effect before each, each
// traced back to the history's operation that sent it, and an audit of whether the
// log can be trusted to be whole.
import type { Witness } from "../store/events.ts";
import { READ, WRITE, type Paired } from "./paired.ts";
import { ACCEPTED, IntList, OK, ProcessSlots, UNDECIDED, type Decisions } from "./table.ts";

export interface ResourceView {
  /** Every decision per key, in the order they took effect: by `order` where the store assigned one (format 2), else log order. */
  byKey: Map<string, IntList>;
  /**
   * Per key, the highest fence of a decision whose outcome is unknown (format 2's
   * `accepted: null`; -Infinity: none). Such a write may have moved the key's fence
   * anywhere after it was sent, so no refusal at or below it is proven false.
   */
  undecidedTop: Float64Array;
  /** Per decision, where its key's fences stood just before it (the one walk of the log). */
  before: FencesBefore;
  /** History event indexes of the write or read that sent a decision (empty if not found). */
  eventsOf(d: number): number[];
}

/**
 * The resource keeps two fences per key (resource/fences.ts): the highest of any
 * accepted request, and the highest of an accepted write. A write must beat every
 * accepted write's fence but only meet a fenced read's (the hold that read with f
 * then writes with f), so the two are kept apart here too. Each is the decision
 * that set it (-1: none yet); ties keep the earlier decision.
 */
export interface FencesBefore {
  /** The accepted write with the highest fence on the decision's key before it. */
  write: Int32Array;
  /** The accepted read that carried the highest fence on the decision's key before it. */
  read: Int32Array;
}

/** The higher-fenced of the two decisions that set a key's fences (-1: neither); a write wins a tie. */
export function topOf(m: Paired, before: FencesBefore, d: number): number {
  const w = before.write[d];
  const r = before.read[d];
  if (r < 0) return w;
  if (w < 0) return r;
  return m.decisions!.fence[r] > m.decisions!.fence[w] ? r : w;
}

/**
 * The one walk of the log that the fence analyses share: `judge` sees each
 * decision, in log order, with the decisions that set its key's fences before it
 * (-1: none), and says what it proves (null: nothing).
 */
export function judgeDecisions(m: Paired, judge: (d: number, write: number, read: number) => Witness | null): Witness[] {
  const { before } = resourceView(m)!;
  const out: Witness[] = [];
  for (let d = 0; d < m.decisions!.length; d++) {
    const w = judge(d, before.write[d], before.read[d]);
    if (w) out.push(w);
  }
  return out;
}

/** Every decision, each key's in the order they took effect: log order unless the store gave them an `order`. */
export function* effectOrder(m: Paired): Generator<number> {
  const ds = m.decisions!;
  if (!ds.ordered) {
    for (let d = 0; d < ds.length; d++) yield d;
    return;
  }
  for (const list of resourceView(m)!.byKey.values()) for (let j = 0; j < list.length; j++) yield list.items[j];
}

const views = new WeakMap<Paired, ResourceView>();

export function resourceView(m: Paired): ResourceView | null {
  const ds = m.decisions;
  if (!ds) return null;
  let view = views.get(m);
  if (view) return view;
  const byKey = new Map<string, IntList>();
  const lists: IntList[] = [];
  const before: FencesBefore = { write: new Int32Array(ds.length), read: new Int32Array(ds.length) };
  const undecidedTop = new Float64Array(m.keys.names.length).fill(-Infinity);
  for (let d = 0; d < ds.length; d++) {
    const k = ds.key[d];
    if (!lists[k]) byKey.set(m.keys.names[k], (lists[k] = new IntList()));
    lists[k].push(d);
    if (ds.accepted[d] === UNDECIDED && ds.fence[d] > undecidedTop[k]) undecidedTop[k] = ds.fence[d];
  }
  if (ds.ordered) for (const list of lists) if (list) inOrder(ds, list);
  for (const list of lists) {
    if (!list) continue;
    let topWrite = -1, topRead = -1;
    for (let j = 0; j < list.length; j++) {
      const d = list.items[j];
      before.write[d] = topWrite;
      before.read[d] = topRead;
      const fence = ds.fence[d];
      // Refused requests, requests without a fence, and those of unknown outcome move no fence that can be relied on.
      if (ds.accepted[d] !== ACCEPTED || Number.isNaN(fence)) continue;
      if (ds.write[d]) {
        if (topWrite < 0 || fence > ds.fence[topWrite]) topWrite = d;
      } else if (topRead < 0 || fence > ds.fence[topRead]) topRead = d;
    }
  }
  view = { byKey, undecidedTop, before, eventsOf: sender(m) };
  views.set(m, view);
  return view;
}

/**
 * A key's decisions sorted by the `order` the store gave them (format 2), stably,
 * so that lines of one order (a decision of unknown outcome that did not take
 * effect, and the one that then took its place) keep their log order. A decision
 * without an order (unknown outcome, place unknown) stays just after the decision
 * logged before it.
 */
function inOrder(ds: Decisions, list: IntList): void {
  const items = Array.from(list.items.subarray(0, list.length));
  const place = new Float64Array(items.length);
  let last = 0;
  items.forEach((d, j) => (place[j] = Number.isNaN(ds.order[d]) ? last : (last = ds.order[d])));
  const idx = items.map((_, j) => j).sort((a, b) => place[a] - place[b] || a - b);
  idx.forEach((j, at) => (list.items[at] = items[j]));
}

/**
 * The history's operation behind each decision. A decision names the client
 * process, which has at most one operation outstanding: the one whose invoke and
 * completion bracket the decision's time (the resource decides between them, on
 * the same clock). Only witnesses ask, and most runs have none: the index of
 * operations per process is built on first use.
 */
function sender(m: Paired): (d: number) => number[] {
  const ds = m.decisions!;
  const o = m.ops;
  let byProcess: IntList[] | null = null;
  const slots = new ProcessSlots();
  return (d) => {
    if (!byProcess) {
      byProcess = [];
      for (let i = 0; i < o.length; i++) {
        if (o.f[i] !== WRITE && o.f[i] !== READ) continue;
        let slot = slots.get(o.process[i]);
        if (slot < 0) slots.set(o.process[i], (slot = byProcess.push(new IntList()) - 1));
        byProcess[slot].push(i);
      }
    }
    const slot = slots.get(ds.process[d]);
    if (slot < 0) return [];
    const list = byProcess[slot];
    const t = ds.time[d];
    // The last operation invoked by then; ties of a completion and the next invoke
    // at one instant leave two, told apart by what they carried.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (o.start[list.items[mid]] <= t) lo = mid + 1;
      else hi = mid;
    }
    const f = ds.write[d] ? WRITE : READ;
    const fits: number[] = [];
    for (let j = lo - 1; j >= 0 && j >= lo - 2; j--) {
      const i = list.items[j];
      if (o.endOf(i) < t || o.f[i] !== f || o.key[i] !== ds.key[d]) continue;
      if (o.owner[i] >= 0 && o.owner[i] !== ds.owner[d]) continue;
      fits.push(i);
    }
    const data = JSON.stringify(ds.data[d]);
    const i = fits.length > 1 ? (fits.find((c) => JSON.stringify(o.data[c]) === data) ?? fits[0]) : fits[0];
    if (i === undefined) return [];
    return o.done[i] >= 0 ? [o.invoke[i], o.done[i]] : [o.invoke[i]];
  };
}

/**
 * Reasons the resource log cannot be trusted to show every decision: numbering
 * that skips (a lost line), or writes the history says took effect that the log
 * never accepted. Analyses built on an incomplete log could miss anomalies.
 */
export function auditResourceLog(m: Paired): { unknown: string[]; warnings: string[] } {
  const unknown: string[] = [];
  const warnings: string[] = [];
  const ds = m.decisions;
  if (!ds) return { unknown, warnings };
  let prev = 0;
  for (let d = 0; d < ds.length; d++) {
    const seq = ds.seq[d];
    if (seq !== prev + 1) {
      // A restarted resource numbers from 1 again: the log is still whole.
      if (seq === 1) warnings.push(`resource.ndjson: numbering restarts at 1 after seq ${prev} (did the resource restart?)`);
      else if (prev === 0) unknown.push(`resource.ndjson: the first decision is seq ${seq}, not 1; earlier decisions are missing`);
      else unknown.push(`resource.ndjson: seq ${seq} follows seq ${prev}; decisions are missing or out of order`);
    }
    prev = seq;
  }
  const missing = unmatchedOkWrites(m);
  unmatched.set(m, missing);
  if (missing > 0) unknown.push(`${missing} writes completed ok in the history but resource.ndjson has no accepted decision for them`);
  return { unknown, warnings };
}

const unmatched = new WeakMap<Paired, number>();

/** How many ok writes auditResourceLog found without an accepted decision (undefined: not audited). */
export const unmatchedWrites = (m: Paired): number | undefined => unmatched.get(m);

/** One number for a (key, owner) pair; exact while keys x owners stays below 2^53. */
const pair = (m: Paired, key: number, owner: number): number => owner * m.keys.names.length + key;

/** Ok writes of the history with no accepted decision of the same key and owner to match. */
function unmatchedOkWrites(m: Paired): number {
  const ds = m.decisions!;
  const o = m.ops;
  // Counted per owner when every owner is seen on one key only, as in any sane run;
  // per (key, owner) pair otherwise.
  const keyOf = new Int32Array(m.owners.names.length).fill(-1);
  let onOneKey = true;
  const note = (key: number, owner: number): void => {
    if (keyOf[owner] < 0) keyOf[owner] = key;
    else if (keyOf[owner] !== key) onOneKey = false;
  };
  // Only an accepted decision matches an ok write: one of unknown outcome proves
  // nothing, and the log may only weaken what the history proves (an ok write it
  // alone matches is unmatched, so the run is at best UNKNOWN).
  for (let d = 0; d < ds.length; d++) if (ds.write[d] && ds.accepted[d] === ACCEPTED) note(ds.key[d], ds.owner[d]);
  // The writes of writesByKey (a write with a key and an owner), read in row order
  // rather than key by key: a run of thousands of keys has them all over the columns.
  const isWrite = (i: number): boolean => o.f[i] === WRITE && o.key[i] >= 0 && o.owner[i] >= 0;
  for (let i = 0; i < o.length; i++) if (isWrite(i)) note(o.key[i], o.owner[i]);
  const accepted = onOneKey ? new Int32Array(m.owners.names.length) : null;
  const pairs = onOneKey ? null : new Map<number, number>();
  // An accepted decision whose sender the history shows (the write of its process,
  // key and owner bracketing it) matches that write; the others go to a pool per
  // owner (and key) that ok writes left unmatched draw from. So an ok write whose
  // own decision is of unknown outcome is not matched by another write's.
  const sentBy = sender(m);
  const opAt = new Map<number, number>();
  const matched = new Uint8Array(o.length);
  let anyUndecided = false;
  for (let d = 0; d < ds.length && !anyUndecided; d++) if (ds.accepted[d] === UNDECIDED) anyUndecided = true;
  if (anyUndecided) for (let i = 0; i < o.length; i++) if (o.f[i] === WRITE) opAt.set(o.invoke[i], i);
  for (let d = 0; d < ds.length; d++) {
    if (!ds.write[d] || ds.accepted[d] !== ACCEPTED) continue;
    if (anyUndecided) {
      const events = sentBy(d);
      const w = events.length > 0 ? opAt.get(events[0]) : undefined;
      // Its own write's, whatever that write's outcome in the history (an info write may have taken effect).
      if (w !== undefined && !matched[w]) {
        matched[w] = 1;
        continue;
      }
    }
    if (accepted) accepted[ds.owner[d]]++;
    else {
      const id = pair(m, ds.key[d], ds.owner[d]);
      pairs!.set(id, (pairs!.get(id) ?? 0) + 1);
    }
  }
  let missing = 0;
  for (let w = 0; w < o.length; w++) {
    if (o.outcome[w] !== OK || !isWrite(w) || matched[w]) continue;
    if (accepted) {
      if (accepted[o.owner[w]] > 0) accepted[o.owner[w]]--;
      else missing++;
      continue;
    }
    const id = pair(m, o.key[w], o.owner[w]);
    const left = pairs!.get(id) ?? 0;
    if (left > 0) pairs!.set(id, left - 1);
    else missing++;
  }
  return missing;
}
