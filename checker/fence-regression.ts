// fence-regression: a hold whose acquire was invoked after another hold's acquire
// completed ok got a lower fence on the same key. Fences must grow in real time;
// when they do not (F2: a Redlock "fence" taken from per-node counters), the
// resource refuses the newer holder or, with fencing off, lets the older one win.
import type { Witness } from "../store/events.ts";
import { ms, quoteAcquire } from "./explain.ts";
import { eventsOf, holdsByAcquireEnd, type Model } from "./model.ts";

export function fenceRegressions(m: Model): Witness[] {
  const { holds, ops } = m;
  const out: Witness[] = [];
  for (const [key, list] of m.holdsByKey) {
    // Holds come in order of their acquire's invoke; the same holds by completion
    // are shared with the mutex analysis. Of the holds whose acquire completed
    // before this one was invoked, the highest fence is the one to beat.
    const byEnd = holdsByAcquireEnd(m, key);
    let next = 0;
    let top = -1;
    for (let j = 0; j < list.length; j++) {
      const h = list.items[j];
      const fence = holds.fence[h];
      if (Number.isNaN(fence)) continue;
      const start = ops.start[holds.acquire[h]];
      for (; next < byEnd.length && ops.endOf(holds.acquire[byEnd[next]]) < start; next++) {
        const c = byEnd[next];
        if (!Number.isNaN(holds.fence[c]) && (top < 0 || holds.fence[c] > holds.fence[top])) top = c;
      }
      if (top < 0 || holds.fence[top] <= fence) continue;
      out.push({
        key,
        events: eventsOf(m, holds.acquire[top], holds.acquire[h]),
        explanation:
          `On key ${JSON.stringify(key)}, ${quoteAcquire(m, top)}; the later ${quoteAcquire(m, h)} was invoked after that ok ` +
          `(at ${ms(start)}) yet got the lower fence ${fence} < ${holds.fence[top]}.`,
      });
    }
  }
  return out;
}
