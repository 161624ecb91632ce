// stale-write-accepted: a write took effect although a write with a higher fence
// had already taken effect on that key. This is what fencing exists to prevent
// (K1, K2): with fencing off it shows what a paused holder did; with fencing on it
// means the resource or the fences are broken.
import type { ResourceDecision, Witness } from "../store/events.ts";
import { ms, quoteDecision, quoteWrite } from "./explain.ts";
import { eventsOf, type Model, type Write } from "./model.ts";
import { resourceView } from "./resource.ts";
import { bestBefore } from "./sweep.ts";

export function staleWrites(m: Model): Witness[] {
  const view = resourceView(m);
  return view ? fromResource(m) : fromHistory(m);
}

function fromResource(m: Model): Witness[] {
  const view = resourceView(m)!;
  const out: Witness[] = [];
  for (const [key, decisions] of view.byKey) {
    let top: ResourceDecision | null = null;
    for (const d of decisions) {
      if (d.op !== "write" || !d.accepted || d.fence === null) continue;
      if (top && top.fence! > d.fence) {
        out.push({
          key,
          seqs: [top.seq, d.seq],
          events: [...view.eventsOf(top), ...view.eventsOf(d)].sort((a, b) => a - b),
          explanation:
            `On key ${JSON.stringify(key)} the resource accepted ${quoteDecision(d)} after it had already accepted ` +
            `${quoteDecision(top)}: a write with fence ${d.fence} took effect after one with the higher fence ${top.fence}.`,
        });
      }
      if (!top || d.fence > top.fence!) top = d;
    }
  }
  return out;
}

// Without the resource's log only real-time order is certain: a write whose ok came
// before another write was invoked took effect first. Info writes prove nothing.
function fromHistory(m: Model): Witness[] {
  const out: Witness[] = [];
  for (const [key, writes] of m.writesByKey) {
    const fenced = writes.filter((w) => w.outcome === "ok" && w.fence !== null);
    const fence = (w: Write): number => w.fence!;
    bestBefore(fenced, (w) => w.end, fence, fenced, (w) => w.start, (w, top) => {
      if (!top || fence(top) <= fence(w)) return;
      out.push({
        key,
        events: eventsOf(top, w),
        explanation:
          `On key ${JSON.stringify(key)}, ${quoteWrite(top)}, so it took effect before ${quoteWrite(w)} was invoked at ${ms(w.start)}; ` +
          `both completed ok, so a write with fence ${w.fence} took effect after one with the higher fence ${top.fence}.`,
      });
    });
  }
  return out;
}
