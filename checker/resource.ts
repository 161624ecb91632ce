// resource.ndjson as the analyses use it: its decisions per key in the order they
// were made (the order writes took effect), each traced back to the history's
// write that sent it, and an audit of whether the log can be trusted to be whole.
import type { Model } from "./model.ts";
import { IntList, OK } from "./table.ts";

export interface ResourceView {
  /** Every decision per key, in log order. */
  byKey: Map<string, IntList>;
  /** History event indexes of the write that sent a decision (empty if not found). */
  eventsOf(d: number): number[];
}

const views = new WeakMap<Model, ResourceView>();

/** One number for a (key, owner) pair; exact while keys x owners stays below 2^53. */
const pair = (m: Model, key: number, owner: number): number => owner * m.keys.names.length + key;

export function resourceView(m: Model): ResourceView | null {
  const ds = m.decisions;
  if (!ds) return null;
  let view = views.get(m);
  if (view) return view;
  const byKey = new Map<string, IntList>();
  const lists: IntList[] = [];
  for (let d = 0; d < ds.length; d++) {
    const k = ds.key[d];
    if (!lists[k]) byKey.set(m.keys.names[k], (lists[k] = new IntList()));
    lists[k].push(d);
  }
  // Only witnesses ask, and most runs have none: the index is built on first use.
  let sent: Map<number, number[]> | null = null;
  const eventsOf = (d: number): number[] => {
    if (!ds.write[d]) return [];
    if (!sent) {
      sent = new Map();
      for (const list of m.writesByKey.values()) {
        for (let j = 0; j < list.length; j++) {
          const w = list.items[j];
          const id = pair(m, m.ops.key[w], m.ops.owner[w]);
          const ws = sent.get(id);
          if (ws) ws.push(w);
          else sent.set(id, [w]);
        }
      }
    }
    // The resource decides between the client's invoke and its completion, on
    // the same clock; data settles the rare case of two candidates.
    const o = m.ops;
    const t = ds.time[d];
    const candidates = (sent.get(pair(m, ds.key[d], ds.owner[d])) ?? []).filter((w) => o.start[w] <= t && t <= o.end[w]);
    const data = JSON.stringify(ds.data[d]);
    const w = candidates.find((c) => JSON.stringify(o.data[c]) === data) ?? candidates[0];
    if (w === undefined) return [];
    return o.done[w] >= 0 ? [o.invoke[w], o.done[w]] : [o.invoke[w]];
  };
  view = { byKey, eventsOf };
  views.set(m, view);
  return view;
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
  for (const list of m.writesByKey.values()) for (let j = 0; j < list.length; j++) note(o.key[list.items[j]], o.owner[list.items[j]]);
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
  for (const list of m.writesByKey.values()) {
    for (let j = 0; j < list.length; j++) {
      const w = list.items[j];
      if (o.outcome[w] !== OK) continue;
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
  }
  return missing;
}
