// interleaved-writers: on one key, hold A's write took effect, then hold B's, then
// A's again. Whatever the fences say, A was writing as though it still held the
// lock after B had taken over: the lock did not give mutual exclusion.
// One witness per (key, A, B): a paused holder would otherwise repeat the story
// for every write of the holder in between.
import type { Witness } from "../store/events.ts";
import { quoted, quoteDecision, quoteWrite } from "./explain.ts";
import { eventsOf, type Paired } from "./paired.ts";
import { about, logThenHistory } from "./history-proofs.ts";
import { resourceView } from "./resource.ts";
import { sortedBy } from "./sweep.ts";
import { ACCEPTED, OK } from "./table.ts";

export function interleavedWriters(m: Paired): Witness[] {
  return logThenHistory(m, () => fromResource(m), () => fromHistory(m));
}

const pairId = (a: number, b: number): string => `${a}\u0000${b}`;

function explain(key: string, a: string, b: string, first: string, middle: string, last: string): string {
  return (
    `On key ${JSON.stringify(key)} writes of hold ${quoted(a)} and hold ${quoted(b)} took effect interleaved: ` +
    `${first}; then ${middle}; then ${last}. Hold ${quoted(a)} wrote again after another hold had written.`
  );
}

// In the log's order: each accepted write of A that follows an earlier one of A
// on the key, and every other hold B with an accepted write between the two. In
// a run whose holds exclude each other a hold's writes stand together, so the
// stretch since A's last write is short.
function fromResource(m: Paired): Witness[] {
  const view = resourceView(m)!;
  const ds = m.decisions!;
  const owner = (d: number): string => m.owners.names[ds.owner[d]];
  const out: Witness[] = [];
  for (const [key, decisions] of view.byKey) {
    const seen = new Set<string>();
    // The key's accepted writes in order, and each owner's last place among them.
    const order: number[] = [];
    const lastAt = new Map<number, number>();
    for (let j = 0; j < decisions.length; j++) {
      const d = decisions.items[j];
      // A write of unknown outcome shows no interleaving (whether it took effect is the question), and hides none.
      if (!ds.write[d] || ds.accepted[d] !== ACCEPTED) continue;
      const p = lastAt.get(ds.owner[d]);
      if (p !== undefined) {
        const before = order[p];
        for (let i = p + 1; i < order.length; i++) {
          const between = order[i];
          if (ds.owner[between] === ds.owner[d] || seen.has(pairId(ds.owner[d], ds.owner[between]))) continue;
          seen.add(pairId(ds.owner[d], ds.owner[between]));
          out.push(about({
            key,
            seqs: [ds.seq[before], ds.seq[between], ds.seq[d]],
            events: [...view.eventsOf(before), ...view.eventsOf(between), ...view.eventsOf(d)].sort((x, y) => x - y),
            explanation: explain(key, owner(d), owner(between), `the resource accepted ${quoteDecision(m, before)}`, quoteDecision(m, between), quoteDecision(m, d)),
          }, `${key}\u0000${pairId(ds.owner[d], ds.owner[between])}`));
        }
      }
      lastAt.set(ds.owner[d], order.length);
      order.push(d);
    }
  }
  return out;
}

interface Span {
  owner: number;
  /** Earliest ok of its writes, and latest invoke. */
  firstEnd: number;
  lastStart: number;
}

// From the history alone, A-B-A is certain when one of A's ok writes completed
// before B's write was invoked, and another was invoked after B's completed. For
// each B write, the holds A whose first ok came before it and whose last write was
// invoked after it completed: holds are taken in as their first ok passes (by
// firstEnd), and let go once their last invoke is behind the B writes' starts
// (which only grow), so the candidates at each B are about the holds active
// around it. Every such pair (A, B) is a witness, once.
function fromHistory(m: Paired): Witness[] {
  const o = m.ops;
  const out: Witness[] = [];
  for (const [key, all] of m.writesByKey) {
    const writes = all.toArray().filter((w) => o.outcome[w] === OK);
    const byOwner = new Map<number, Span>();
    for (const w of writes) {
      const s = byOwner.get(o.owner[w]);
      if (!s) byOwner.set(o.owner[w], { owner: o.owner[w], firstEnd: o.endOf(w), lastStart: o.start[w] });
      else {
        if (o.endOf(w) < s.firstEnd) s.firstEnd = o.endOf(w);
        if (o.start[w] > s.lastStart) s.lastStart = o.start[w];
      }
    }
    const owned = [...byOwner.values()];
    const spans = Array.from(sortedBy(owned.map((_, i) => i), (i) => owned[i].firstEnd), (i) => owned[i]);
    const byStart = sortedBy(writes, (w) => o.start[w]);
    const seen = new Set<string>();
    let candidates: Span[] = [];
    let i = 0;
    for (const b of byStart) {
      for (; i < spans.length && spans[i].firstEnd < o.start[b]; i++) candidates.push(spans[i]);
      // A hold whose last write was invoked before this B began can be A for no later B either.
      if (candidates.length > 64) candidates = candidates.filter((c) => c.lastStart >= o.start[b]);
      for (const a of candidates) {
        if (a.owner === o.owner[b] || a.lastStart <= o.endOf(b) || seen.has(pairId(a.owner, o.owner[b]))) continue;
        seen.add(pairId(a.owner, o.owner[b]));
        // The tightest pair around b: A's last ok before it and A's first write after.
        let a1 = -1;
        let a2 = -1;
        for (const w of writes) {
          if (o.owner[w] !== a.owner) continue;
          if (o.endOf(w) < o.start[b] && (a1 < 0 || o.endOf(w) > o.endOf(a1))) a1 = w;
          if (o.start[w] > o.endOf(b) && (a2 < 0 || o.start[w] < o.start[a2])) a2 = w;
        }
        out.push(about({
          key,
          events: eventsOf(m, a1, b, a2),
          explanation: explain(key, m.owners.names[a.owner], m.owners.names[o.owner[b]], quoteWrite(m, a1), quoteWrite(m, b), quoteWrite(m, a2)),
        }, `${key}\u0000${pairId(a.owner, o.owner[b])}`));
      }
    }
  }
  return out;
}
