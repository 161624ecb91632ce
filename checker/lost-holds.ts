// Whether a lock library tells its user that a lock is gone (format 2 notices):
// for every hold that was certainly lost, whether a `lost` notice came for it,
// and how long after the loss was certain. Not an anomaly: a library that never
// says so leaves its user to find out from a failed renew, or from fencing.
//
// A hold is certainly lost once another hold of its key was certainly granted
// while it was still held: that other acquire was invoked after this hold's
// acquire returned ok, and returned ok itself before this hold's release was
// sent (or this hold was never released, or its release said it no longer held
// the lock). A correct lock grants the key only once the previous hold is gone,
// so by the other acquire's ok this one was lost, whatever the library thought.
import { readsOnly } from "./kinds/rw.ts";
import { holdsByAcquireEnd, RELEASE, type Paired, type Notice } from "./paired.ts";
import { FAIL } from "./table.ts";
import { tailOf } from "./tail.ts";

export interface LostHoldsStats {
  /** Holds certainly lost while held. */
  holds: number;
  /** Of those, the holds a `lost` notice named (by owner, or by key and process) after their acquire. */
  told: number;
  /** Notice time minus the moment the loss was certain, in ms, over the holds told (negative: told before the other grant returned). */
  told_after_ms: { p50: number; p99: number; max: number } | null;
  /** Up to 10 owners of holds lost and never told. */
  untold: string[];
}

const UNTOLD_LISTED = 10;

/** null for a history that cannot hold notices (format 1): the question does not apply. */
export function lostHoldsStats(m: Paired): LostHoldsStats | null {
  if (m.header.format !== 2) return null;
  const { ops, holds } = m;
  const lostNotices = m.notices.filter((n) => n.f === "lost");
  const byOwner = new Map<string, Notice>();
  for (const n of lostNotices) if (n.owner !== undefined && !byOwner.has(n.owner)) byOwner.set(n.owner, n);
  const anonymous = lostNotices.filter((n) => n.owner === undefined);
  const rw = m.kind?.lock === "rw";
  const permits = m.kind?.lock === "semaphore" ? m.kind.permits : 1;
  let lost = 0;
  const delays: number[] = [];
  const untold: string[] = [];
  for (const key of m.holdsByKey.keys()) {
    const order = holdsByAcquireEnd(m, key);
    for (let i = 0; i < order.length; i++) {
      const h = order[i];
      const granted = ops.endOf(holds.acquire[h]);
      const until = releaseSent(m, h);
      // The first later grant that certainly came after this one and before it let
      // go, and that it could not share the lock with: for a semaphore of N, the
      // N-th such grant; for an rw lock, one of a writer, or of anyone after a writer.
      let lostAt = NaN;
      let taken = 0;
      for (let j = i + 1; j < order.length; j++) {
        const other = holds.acquire[order[j]];
        const end = ops.endOf(other);
        if (end >= until) break;
        if (ops.start[other] > granted && (!rw || !readsOnly(m, h) || !readsOnly(m, order[j])) && ++taken >= permits) {
          lostAt = end;
          break;
        }
      }
      if (Number.isNaN(lostAt)) continue;
      lost++;
      const owner = m.owners.names[holds.owner[h]];
      const process = ops.process[holds.acquire[h]];
      const notice = byOwner.get(owner) ?? anonymous.find((n) => n.process === process && n.time > granted && (n.key === undefined || n.key === key));
      if (notice && notice.time > granted) delays.push((notice.time - lostAt) / 1e6);
      else if (untold.length < UNTOLD_LISTED) untold.push(owner);
    }
  }
  return { holds: lost, told: delays.length, told_after_ms: tailOf(Float64Array.from(delays)), untold };
}

/**
 * When the hold's release was sent, if it may have let go then: Infinity when it
 * certainly never did (no release, one that failed, or one that found the lock no
 * longer its). An unknown release may have let go: its send counts.
 */
function releaseSent(m: Paired, h: number): number {
  const ops = m.ops;
  for (let r = m.holds.first[h]; r >= 0; r = ops.next[r]) {
    if (ops.f[r] === RELEASE && ops.outcome[r] !== FAIL && !ops.notReleased[r]) return ops.start[r];
  }
  return Infinity;
}
