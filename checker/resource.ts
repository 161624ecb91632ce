// resource.ndjson as the analyses use it: its decisions per key in the order they
// were made (the order writes took effect), the fences in effect before each, each
// traced back to the history's operation that sent it, and an audit of whether the
// log can be trusted to be whole.
import type { Witness } from "../store/events.ts";
import { READ, WRITE, type Model } from "./model.ts";
import { IntList, OK, ProcessSlots } from "./table.ts";

export interface ResourceView {
  /** Every decision per key, in log order. */
  byKey: Map<string, IntList>;
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
export function topOf(m: Model, before: FencesBefore, d: number): number {
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
export function judgeDecisions(m: Model, judge: (d: number, write: number, read: number) => Witness | null): Witness[] {
  const { before } = resourceView(m)!;
  const out: Witness[] = [];
  for (let d = 0; d < m.decisions!.length; d++) {
    const w = judge(d, before.write[d], before.read[d]);
    if (w) out.push(w);
  }
  return out;
}

const views = new WeakMap<Model, ResourceView>();

export function resourceView(m: Model): ResourceView | null {
  const ds = m.decisions;
  if (!ds) return null;
  let view = views.get(m);
  if (view) return view;
  const byKey = new Map<string, IntList>();
  const lists: IntList[] = [];
  const before: FencesBefore = { write: new Int32Array(ds.length), read: new Int32Array(ds.length) };
  const topWrite = new Int32Array(m.keys.names.length).fill(-1);
  const topRead = new Int32Array(m.keys.names.length).fill(-1);
  for (let d = 0; d < ds.length; d++) {
    const k = ds.key[d];
    if (!lists[k]) byKey.set(m.keys.names[k], (lists[k] = new IntList()));
    lists[k].push(d);
    before.write[d] = topWrite[k];
    before.read[d] = topRead[k];
    const fence = ds.fence[d];
    // Refused requests and requests without a fence move no fence.
    if (!ds.accepted[d] || Number.isNaN(fence)) continue;
    const top = ds.write[d] ? topWrite : topRead;
    if (top[k] < 0 || fence > ds.fence[top[k]]) top[k] = d;
  }
  view = { byKey, before, eventsOf: sender(m) };
  views.set(m, view);
  return view;
}

/**
 * The history's operation behind each decision. A decision names the client
 * process, which has at most one operation outstanding: the one whose invoke and
 * completion bracket the decision's time (the resource decides between them, on
 * the same clock). Only witnesses ask, and most runs have none: the index of
 * operations per process is built on first use.
 */
function sender(m: Model): (d: number) => number[] {
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
export function auditResourceLog(m: Model): { unknown: string[]; warnings: string[] } {
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
  if (missing > 0) unknown.push(`${missing} writes completed ok in the history but resource.ndjson has no accepted decision for them`);
  return { unknown, warnings };
}

/** One number for a (key, owner) pair; exact while keys x owners stays below 2^53. */
const pair = (m: Model, key: number, owner: number): number => owner * m.keys.names.length + key;

/** Ok writes of the history with no accepted decision of the same key and owner to match. */
function unmatchedOkWrites(m: Model): number {
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
  for (let d = 0; d < ds.length; d++) if (ds.write[d] && ds.accepted[d]) note(ds.key[d], ds.owner[d]);
  // The writes of writesByKey (a write with a key and an owner), read in row order
  // rather than key by key: a run of thousands of keys has them all over the columns.
  const isWrite = (i: number): boolean => o.f[i] === WRITE && o.key[i] >= 0 && o.owner[i] >= 0;
  for (let i = 0; i < o.length; i++) if (isWrite(i)) note(o.key[i], o.owner[i]);
  const accepted = onOneKey ? new Int32Array(m.owners.names.length) : null;
  const pairs = onOneKey ? null : new Map<number, number>();
  for (let d = 0; d < ds.length; d++) {
    if (!ds.write[d] || !ds.accepted[d]) continue;
    if (accepted) accepted[ds.owner[d]]++;
    else {
      const id = pair(m, ds.key[d], ds.owner[d]);
      pairs!.set(id, (pairs!.get(id) ?? 0) + 1);
    }
  }
  let missing = 0;
  for (let w = 0; w < o.length; w++) {
    if (o.outcome[w] !== OK || !isWrite(w)) continue;
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
