// duplicate-fence: two different holds of one key were given the same fence. The
// resource cannot tell such holds apart, so one of them can write over the other
// (F1: a fence counter that restarted).
import type { Witness } from "../store/events.ts";
import { quoteAcquire } from "./explain.ts";
import { eventsOf, type Model } from "./model.ts";

export function duplicateFences(m: Model): Witness[] {
  const { holds } = m;
  const out: Witness[] = [];
  for (const [key, list] of m.holdsByKey) {
    const first = new Map<number, number>();
    for (let j = 0; j < list.length; j++) {
      const h = list.items[j];
      const fence = holds.fence[h];
      if (Number.isNaN(fence)) continue;
      const earlier = first.get(fence);
      if (earlier === undefined) {
        first.set(fence, h);
        continue;
      }
      out.push({
        key,
        events: eventsOf(m, holds.acquire[earlier], holds.acquire[h]),
        explanation:
          `On key ${JSON.stringify(key)}, ${quoteAcquire(m, earlier)} and ${quoteAcquire(m, h)} ` +
          `gave two different holds the same fence ${fence}.`,
      });
    }
  }
  return out;
}
