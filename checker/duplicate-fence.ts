// duplicate-fence: two different holds of one key were given the same fence. The
// resource cannot tell such holds apart, so one of them can write over the other
// (F1: a fence counter that restarted).
import type { Witness } from "../store/events.ts";
import { quoteAcquire } from "./explain.ts";
import { eventsOf, type Paired } from "./paired.ts";
import type { Narrow } from "./table.ts";

export function duplicateFences(m: Paired): Witness[] {
  const { holds } = m;
  const out: Witness[] = [];
  for (const [key, list] of m.holdsByKey) {
    if (!repeats(holds.fence, list.items.subarray(0, list.length))) continue;
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
          `gave two different holds the same fence ${fence}, so the resource cannot tell their writes apart.`,
      });
    }
  }
  return out;
}

/**
 * Whether some fence occurs twice among these holds; the answer is nearly always
 * no. Fences are a counter, so a bitmap over their range is cheaper than a sort or
 * a map; a sort is the fallback for fences spread too thin.
 */
function repeats(fences: Narrow, holds: Int32Array): boolean {
  let lo = Infinity;
  let hi = -Infinity;
  let n = 0;
  for (let i = 0; i < holds.length; i++) {
    const f = fences[holds[i]];
    if (Number.isNaN(f)) continue;
    n++;
    if (f < lo) lo = f;
    if (f > hi) hi = f;
  }
  if (n < 2) return false;
  if (hi - lo < 8 * n + 1024) {
    const seen = new Uint8Array(hi - lo + 1);
    for (let i = 0; i < holds.length; i++) {
      const f = fences[holds[i]];
      if (Number.isNaN(f)) continue;
      if (seen[f - lo]) return true;
      seen[f - lo] = 1;
    }
    return false;
  }
  const sorted = new Float64Array(holds.length);
  for (let i = 0; i < holds.length; i++) sorted[i] = fences[holds[i]];
  sorted.sort();
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return true;
  return false;
}
