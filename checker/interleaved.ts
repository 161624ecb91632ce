// interleaved-writers: on one key, hold A's write took effect, then hold B's, then
// A's again. Whatever the fences say, A was writing as though it still held the
// lock after B had taken over: the lock did not give mutual exclusion.
// One witness per (key, A, B): a paused holder would otherwise repeat the story
// for every write of the holder in between.
import type { ResourceDecision, Witness } from "../store/events.ts";
import { quoted, quoteDecision, quoteWrite } from "./explain.ts";
import { eventsOf, type Model, type Write } from "./model.ts";
import { resourceView } from "./resource.ts";

export function interleavedWriters(m: Model): Witness[] {
  return resourceView(m) ? fromResource(m) : fromHistory(m);
}

const pairId = (a: string, b: string): string => `${a}\u0000${b}`;

function explain(key: string, a: string, b: string, first: string, middle: string, last: string): string {
  return (
    `On key ${JSON.stringify(key)} writes of hold ${quoted(a)} and hold ${quoted(b)} took effect interleaved: ` +
    `${first}; then ${middle}; then ${last}. Hold ${quoted(a)} wrote again after another hold had written.`
  );
}

function fromResource(m: Model): Witness[] {
  const view = resourceView(m)!;
  const out: Witness[] = [];
  for (const [key, decisions] of view.byKey) {
    const lastOf = new Map<string, ResourceDecision>();
    const seen = new Set<string>();
    let last: ResourceDecision | null = null;
    for (const d of decisions) {
      if (d.op !== "write" || !d.accepted) continue;
      const before = lastOf.get(d.owner);
      if (last && before && last.owner !== d.owner && !seen.has(pairId(d.owner, last.owner))) {
        seen.add(pairId(d.owner, last.owner));
        out.push({
          key,
          seqs: [before.seq, last.seq, d.seq],
          events: [...view.eventsOf(before), ...view.eventsOf(last), ...view.eventsOf(d)].sort((x, y) => x - y),
          explanation: explain(key, d.owner, last.owner, `the resource accepted ${quoteDecision(before)}`, quoteDecision(last), quoteDecision(d)),
        });
      }
      lastOf.set(d.owner, d);
      last = d;
    }
  }
  return out;
}

interface Span {
  owner: string;
  /** Earliest ok of its writes, and latest invoke. */
  firstEnd: number;
  lastStart: number;
}

// From the history alone, A-B-A is certain when one of A's ok writes completed
// before B's write was invoked, and another was invoked after B's completed. For
// each B write it is enough to know, among the holds whose first ok came before
// it, the two with the latest write invoke (two, so one is not B's own).
function fromHistory(m: Model): Witness[] {
  const out: Witness[] = [];
  for (const [key, all] of m.writesByKey) {
    const writes = all.filter((w) => w.outcome === "ok");
    const byOwner = new Map<string, Span>();
    for (const w of writes) {
      const s = byOwner.get(w.owner);
      if (!s) byOwner.set(w.owner, { owner: w.owner, firstEnd: w.end, lastStart: w.start });
      else {
        if (w.end < s.firstEnd) s.firstEnd = w.end;
        if (w.start > s.lastStart) s.lastStart = w.start;
      }
    }
    const spans = [...byOwner.values()].sort((x, y) => x.firstEnd - y.firstEnd);
    const byStart = [...writes].sort((x, y) => x.start - y.start);
    const seen = new Set<string>();
    let top1: Span | null = null;
    let top2: Span | null = null;
    let i = 0;
    for (const b of byStart) {
      for (; i < spans.length && spans[i].firstEnd < b.start; i++) {
        const s = spans[i];
        if (!top1 || s.lastStart > top1.lastStart) {
          top2 = top1;
          top1 = s;
        } else if (!top2 || s.lastStart > top2.lastStart) top2 = s;
      }
      const a = top1?.owner !== b.owner ? top1 : top2;
      if (!a || a.lastStart <= b.end || seen.has(pairId(a.owner, b.owner))) continue;
      seen.add(pairId(a.owner, b.owner));
      // The tightest pair around b: A's last ok before it and A's first write after.
      let a1: Write | null = null;
      let a2: Write | null = null;
      for (const w of writes) {
        if (w.owner !== a.owner) continue;
        if (w.end < b.start && (!a1 || w.end > a1.end)) a1 = w;
        if (w.start > b.end && (!a2 || w.start < a2.start)) a2 = w;
      }
      out.push({
        key,
        events: eventsOf(a1!, b, a2!),
        explanation: explain(key, a.owner, b.owner, quoteWrite(a1!), quoteWrite(b), quoteWrite(a2!)),
      });
    }
  }
  return out;
}
