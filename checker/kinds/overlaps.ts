// The one sweep the rw, semaphore and reentrancy analyses share with the mutex's
// (spans.ts sweepGrants): each key's holds at each moment one was granted (its
// acquire's ok, or a late renew's), with the holds still certainly valid, or still
// acting, then. What a conflict is differs by lock kind (rw.ts, semaphore.ts,
// reentrancy.ts): the sweep hands each grant the holds it met and lets the kind judge.
import type { Paired } from "../paired.ts";
import { holdSpans, sweepGrants, type Met } from "../spans.ts";

export type { Met };

/** Calls `meet` for every grant made while another hold of its key was valid or acting; only holds certainly valid then are met as valid. */
export function sweepHolds(m: Paired, meet: (x: Met) => void): void {
  sweepGrants(m, holdSpans(m), meet);
}
