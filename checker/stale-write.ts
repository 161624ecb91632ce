// stale-write-accepted: a write took effect although a write with a higher fence
// had already taken effect on that key. This is what fencing exists to prevent
// (K1, K2): with fencing off it shows what a paused holder did; with fencing on it
// means the resource or the fences are broken.
import type { Witness } from "../store/events.ts";
import { keyText, quoteDecision, quoteWrite } from "./explain.ts";
import { eventsOf, type Paired } from "./paired.ts";
import { about, logThenHistory, writeSubject } from "./history-proofs.ts";
import { judgeDecisions, resourceView } from "./resource.ts";
import { bestBefore, column } from "./sweep.ts";
import { ACCEPTED, OK } from "./table.ts";

export function staleWrites(m: Paired): Witness[] {
  return logThenHistory(m, () => judgeDecisions(m, (d, top) => staleDecision(m, d, top)), () => fromHistory(m));
}

// The walk of the log (resource.ts) gives each decision the accepted write with the
// highest fence before it. Fenced reads are left out: the anomaly is about writes,
// and a read that carried a higher fence is what lost-update is about.
function staleDecision(m: Paired, d: number, top: number): Witness | null {
  const ds = m.decisions!;
  const fence = ds.fence[d];
  if (!ds.write[d] || ds.accepted[d] !== ACCEPTED || top < 0 || !(ds.fence[top] > fence)) return null;
  const view = resourceView(m)!;
  return about({
    key: m.keys.names[ds.key[d]],
    seqs: [ds.seq[top], ds.seq[d]],
    events: [...view.eventsOf(top), ...view.eventsOf(d)].sort((a, b) => a - b),
    explanation:
      `On key ${keyText(m, ds.key[d])} the resource accepted ${quoteDecision(m, d)} after it had already accepted ` +
      `${quoteDecision(m, top)}: a write with fence ${fence} took effect after one with the higher fence ${ds.fence[top]}` +
      (ds.fencing[d] ? `, which a resource enforcing fences must refuse.` : `; fencing was off, so nothing stopped the older holder.`),
  }, writeSubject(view.eventsOf(d), ds.seq[d]));
}

// Without the resource's log only real-time order is certain: a write whose ok came
// before another write was invoked took effect first. Info writes prove nothing.
function fromHistory(m: Paired): Witness[] {
  const o = m.ops;
  const out: Witness[] = [];
  for (const [key, writes] of m.writesByKey) {
    const fenced = writes.toArray().filter((w) => o.outcome[w] === OK && !Number.isNaN(o.fence[w]));
    const fence = column(fenced, (w) => o.fence[w]);
    const { order, best } = bestBefore(column(fenced, (w) => o.endOf(w)), fence, column(fenced, (w) => o.start[w]));
    for (const i of order) {
      const t = best[i];
      if (t < 0 || fence[t] <= fence[i]) continue;
      const [top, w] = [fenced[t], fenced[i]];
      out.push(about({
        key,
        events: eventsOf(m, top, w),
        explanation:
          `On key ${JSON.stringify(key)}, ${quoteWrite(m, top)}; then ${quoteWrite(m, w)}. ` +
          `The first completed before the second was invoked, so it took effect first, and both took effect (ok): ` +
          `a write with fence ${fence[i]} took effect after one with the higher fence ${fence[t]}.`,
      }, writeSubject([o.invoke[w]])));
    }
  }
  return out;
}
