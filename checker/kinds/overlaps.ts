// The one sweep the rw and semaphore analyses share: each key's holds in order of
// their grant, each with its span of certain validity (mutex.ts), and the holds
// still certainly valid, or still acting, when the next is granted. What a
// conflict is differs by lock kind (rw.ts, semaphore.ts): the sweep hands each
// new hold the ones it met and lets the kind judge.
import { holdsInEndOrder, type Paired } from "../paired.ts";
import { spans } from "../mutex.ts";

export interface Met {
  /** The hold just granted, and when. */
  hold: number;
  at: number;
  /** Holds of the key still certainly valid at `at` (the new one is too, or it is not listed at all). */
  valid: number[];
  /** Holds whose holder still acted as one at `at` without being certainly valid (a lease that ran out). */
  acting: number[];
}

/** Calls `meet` for every hold granted while another of its key was valid or acting; only holds certainly valid when granted are met as valid. */
export function sweepHolds(m: Paired, meet: (x: Met) => void): void {
  const { holds } = m;
  const { order, ends: start } = holdsInEndOrder(m);
  const { end, claimed } = spans(m);
  const activeByKey = new Map<number, number[]>();
  for (const h of order) {
    const k = holds.key[h];
    const s = start[h];
    const active = (activeByKey.get(k) ?? []).filter((a) => claimed[a] > s);
    const valid = end[h] > s ? active.filter((a) => end[a] > s) : [];
    const acting = active.filter((a) => !valid.includes(a));
    if (active.length > 0) meet({ hold: h, at: s, valid, acting });
    active.push(h);
    activeByKey.set(k, active);
  }
}
