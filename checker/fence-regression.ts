// fence-regression: a hold whose acquire was invoked after another hold's acquire
// completed ok got a lower fence on the same key. Fences must grow in real time;
// when they do not (F2: a Redlock "fence" taken from per-node counters), the
// resource refuses the newer holder or, with fencing off, lets the older one win.
import type { Witness } from "../store/events.ts";
import { ms, quoteAcquire } from "./explain.ts";
import { eventsOf, type Model } from "./model.ts";
import { bestBefore } from "./sweep.ts";

export function fenceRegressions(m: Model): Witness[] {
  const { holds, ops } = m;
  const out: Witness[] = [];
  for (const [key, list] of m.holdsByKey) {
    const fenced = list.toArray().filter((h) => !Number.isNaN(holds.fence[h]));
    const fence = (h: number): number => holds.fence[h];
    bestBefore(fenced, (h) => ops.end[holds.acquire[h]], fence, fenced, (h) => ops.start[holds.acquire[h]], (h, top) => {
      if (top === undefined || fence(top) <= fence(h)) return;
      out.push({
        key,
        events: eventsOf(m, holds.acquire[top], holds.acquire[h]),
        explanation:
          `On key ${JSON.stringify(key)}, ${quoteAcquire(m, top)}; the later ${quoteAcquire(m, h)} was invoked after that ok ` +
          `(at ${ms(ops.start[holds.acquire[h]])}) yet got the lower fence ${fence(h)} < ${fence(top)}.`,
      });
    });
  }
  return out;
}
