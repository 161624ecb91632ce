// pollAcquire with an AbortSignal, for locks with no queue to wait in. Nothing is
// ever queued on the service, so giving up leaves no waiter behind: once the
// signal has fired, the next try is not made and the acquire fails "cancelled",
// a certain outcome.
//
// A try already in flight when the signal fires runs to its end, and if it took
// the lock the acquire is ok: that is what happened, and the workload releases a
// hold it no longer wants. Releasing it here and saying "cancelled" instead would
// be true only if that release certainly worked, and a release that gets no answer
// would turn a known grant into an unknown outcome; the grant is the better fact.
import { CANCELLED, pollAcquire, type Hold, type Outcome } from "./lock.ts";
import type { Rng } from "../lib/index.ts";

export function pollUntilCancelled(
  tryOnce: () => Promise<Outcome<Hold> | null>,
  timeoutMs: number,
  rng: Rng,
  signal: AbortSignal | undefined,
): Promise<Outcome<Hold>> {
  const cancelled: Outcome<Hold> = { type: "fail", error: CANCELLED };
  return pollAcquire(async () => (signal?.aborted ? cancelled : tryOnce()), timeoutMs, rng);
}
