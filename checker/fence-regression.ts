// fence-regression: a hold whose acquire was invoked after another hold's acquire
// completed ok got a lower fence on the same key. Fences must grow in real time;
// when they do not (F2: a Redlock "fence" taken from per-node counters), the
// resource refuses the newer holder or, with fencing off, lets the older one win.
import type { Witness } from "../store/events.ts";
import { ms, quoteAcquire } from "./explain.ts";
import { eventsOf, holdsInEndOrder, type Paired } from "./paired.ts";
import { column, orderOf } from "./sweep.ts";

export function fenceRegressions(m: Paired): Witness[] {
  const { holds, ops } = m;
  const out: Witness[] = [];
  // One sweep over every key at once: holds in order of their acquire's invoke
  // (the columns' own order, so a lookup, unless clock bounds moved the invokes:
  // checker/clock.ts), and against them the holds in order of their acquire's
  // completion. Per key, of the holds whose acquire completed before this one was
  // invoked, the highest fence (the first of equals) is the one to beat. A walk
  // per key would jump all over the columns of a run of thousands of keys.
  const { order: byEnd, ends } = holdsInEndOrder(m);
  const byStart = orderOf(column(holds.acquire.subarray(0, holds.length), (a) => ops.start[a]));
  const top = new Int32Array(m.keys.names.length).fill(-1);
  let next = 0;
  for (const h of byStart) {
    const fence = holds.fence[h];
    if (Number.isNaN(fence)) continue;
    const start = ops.start[holds.acquire[h]];
    for (; next < byEnd.length && ends[byEnd[next]] < start; next++) {
      const c = byEnd[next];
      const k = holds.key[c];
      if (!Number.isNaN(holds.fence[c]) && (top[k] < 0 || holds.fence[c] > holds.fence[top[k]])) top[k] = c;
    }
    const t = top[holds.key[h]];
    if (t < 0 || holds.fence[t] <= fence) continue;
    const key = m.keys.names[holds.key[h]];
    out.push({
      key,
      events: eventsOf(m, holds.acquire[t], holds.acquire[h]),
      explanation:
        `On key ${JSON.stringify(key)}, ${quoteAcquire(m, t)}; the later ${quoteAcquire(m, h)} was invoked after that ok ` +
        `(at ${ms(start)}) yet got the lower fence ${fence} < ${holds.fence[t]}.`,
    });
  }
  return out;
}
