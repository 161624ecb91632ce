// fence-regression: a hold whose acquire was invoked after another hold's acquire
// completed ok got a lower fence on the same key. Fences must grow in real time;
// when they do not (F2: a Redlock "fence" taken from per-node counters), the
// resource refuses the newer holder or, with fencing off, lets the older one win.
import type { Witness } from "../store/events.ts";
import { ms, quoteAcquire } from "./explain.ts";
import { eventsOf, type Hold, type Model } from "./model.ts";
import { bestBefore } from "./sweep.ts";

export function fenceRegressions(m: Model): Witness[] {
  const out: Witness[] = [];
  for (const [key, holds] of m.holdsByKey) {
    const fenced = holds.filter((h) => h.fence !== null);
    const fence = (h: Hold): number => h.fence!;
    bestBefore(fenced, (h) => h.acquire.end, fence, fenced, (h) => h.acquire.start, (h, top) => {
      if (!top || fence(top) <= fence(h)) return;
      out.push({
        key,
        events: eventsOf(top.acquire, h.acquire),
        explanation:
          `On key ${JSON.stringify(key)}, ${quoteAcquire(top)}; the later ${quoteAcquire(h)} was invoked after that ok ` +
          `(at ${ms(h.acquire.start)}) yet got the lower fence ${h.fence} < ${top.fence}.`,
      });
    });
  }
  return out;
}
