// duplicate-fence: two different holds of one key were given the same fence. The
// resource cannot tell such holds apart, so one of them can write over the other
// (F1: a fence counter that restarted).
import type { Witness } from "../store/events.ts";
import { quoteAcquire } from "./explain.ts";
import { eventsOf, type Hold, type Model } from "./model.ts";

export function duplicateFences(m: Model): Witness[] {
  const out: Witness[] = [];
  for (const [key, holds] of m.holdsByKey) {
    const first = new Map<number, Hold>();
    for (const h of holds) {
      if (h.fence === null) continue;
      const earlier = first.get(h.fence);
      if (!earlier) {
        first.set(h.fence, h);
        continue;
      }
      out.push({
        key,
        events: eventsOf(earlier.acquire, h.acquire),
        explanation:
          `On key ${JSON.stringify(key)}, ${quoteAcquire(earlier)} and ${quoteAcquire(h)} ` +
          `gave two different holds the same fence ${h.fence}.`,
      });
    }
  }
  return out;
}
