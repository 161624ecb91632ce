// fence-regression: a hold whose acquire was invoked after another hold's acquire
// completed ok got a lower fence on the same key. Fences must grow in real time;
// when they do not (F2: a Redlock "fence" taken from per-node counters), the
// resource refuses the newer holder or, with fencing off, lets the older one win.
import type { Witness } from "../store/events.ts";
import { ms, quoteAcquire } from "./explain.ts";
import { eventsOf, type Model } from "./model.ts";
import { bestBefore, column } from "./sweep.ts";

export function fenceRegressions(m: Model): Witness[] {
  const { holds, ops } = m;
  const out: Witness[] = [];
  for (const [key, list] of m.holdsByKey) {
    const fenced = list.toArray().filter((h) => !Number.isNaN(holds.fence[h]));
    const fence = column(fenced, (h) => holds.fence[h]);
    const { order, best } = bestBefore(column(fenced, (h) => ops.end[holds.acquire[h]]), fence, column(fenced, (h) => ops.start[holds.acquire[h]]));
    for (const i of order) {
      const t = best[i];
      if (t < 0 || fence[t] <= fence[i]) continue;
      const [top, h] = [fenced[t], fenced[i]];
      out.push({
        key,
        events: eventsOf(m, holds.acquire[top], holds.acquire[h]),
        explanation:
          `On key ${JSON.stringify(key)}, ${quoteAcquire(m, top)}; the later ${quoteAcquire(m, h)} was invoked after that ok ` +
          `(at ${ms(ops.start[holds.acquire[h]])}) yet got the lower fence ${fence[i]} < ${fence[t]}.`,
      });
    }
  }
  return out;
}
