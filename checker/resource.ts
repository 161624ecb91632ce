// resource.ndjson as the analyses use it: its decisions per key in the order they
// were made (the order writes took effect), each traced back to the history's
// write that sent it, and an audit of whether the log can be trusted to be whole.
import type { ResourceDecision } from "../store/events.ts";
import type { Model, Write } from "./model.ts";

export interface ResourceView {
  /** Every decision per key, in log order. */
  byKey: Map<string, ResourceDecision[]>;
  /** History event indexes of the write or read that sent a decision (empty if not found). */
  eventsOf(d: ResourceDecision): number[];
}

const views = new WeakMap<Model, ResourceView>();

export function resourceView(m: Model): ResourceView | null {
  if (!m.decisions) return null;
  let view = views.get(m);
  if (view) return view;
  const byKey = new Map<string, ResourceDecision[]>();
  for (const d of m.decisions) {
    let list = byKey.get(d.key);
    if (!list) byKey.set(d.key, (list = []));
    list.push(d);
  }
  const sent = new Map<string, Write[]>();
  for (const list of m.writesByKey.values()) {
    for (const w of list) {
      const id = `${w.key}\u0000${w.owner}`;
      const ws = sent.get(id);
      if (ws) ws.push(w);
      else sent.set(id, [w]);
    }
  }
  const eventsOf = (d: ResourceDecision): number[] => {
    if (d.op !== "write") return [];
    // The resource decides between the client's invoke and its completion, on
    // the same clock; data settles the rare case of two candidates.
    const candidates = (sent.get(`${d.key}\u0000${d.owner}`) ?? []).filter((w) => w.start <= d.time && d.time <= w.end);
    const w = candidates.find((c) => JSON.stringify(c.data) === JSON.stringify(d.data)) ?? candidates[0];
    if (!w) return [];
    return w.done ? [w.invoke.index, w.done.index] : [w.invoke.index];
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
  const decisions = m.decisions;
  if (!decisions) return { unknown, warnings };
  let prev = 0;
  for (const d of decisions) {
    if (d.seq !== prev + 1) {
      // A restarted resource numbers from 1 again: the log is still whole.
      if (d.seq === 1) warnings.push(`resource.ndjson: numbering restarts at 1 after seq ${prev} (did the resource restart?)`);
      else if (prev === 0) unknown.push(`resource.ndjson: the first decision is seq ${d.seq}, not 1; earlier decisions are missing`);
      else unknown.push(`resource.ndjson: seq ${d.seq} follows seq ${prev}; decisions are missing or out of order`);
    }
    prev = d.seq;
  }
  const accepted = new Map<string, number>();
  for (const d of decisions) {
    if (d.op !== "write" || !d.accepted) continue;
    const id = `${d.key}\u0000${d.owner}`;
    accepted.set(id, (accepted.get(id) ?? 0) + 1);
  }
  const okWrites = new Map<string, number>();
  for (const list of m.writesByKey.values()) {
    for (const w of list) {
      if (w.outcome !== "ok") continue;
      const id = `${w.key}\u0000${w.owner}`;
      okWrites.set(id, (okWrites.get(id) ?? 0) + 1);
    }
  }
  let missing = 0;
  for (const [id, n] of okWrites) missing += Math.max(0, n - (accepted.get(id) ?? 0));
  if (missing > 0) unknown.push(`${missing} writes completed ok in the history but resource.ndjson has no accepted decision for them`);
  return { unknown, warnings };
}
