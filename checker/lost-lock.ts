// lost-lock-unnoticed: a hold whose client went on as its holder after it had
// certainly lost the lock, without a new acquire (redis-semaphore #175, etcd3 #110):
//
// a renew of it returned ok although another hold's whole acquire, from invoke to
// ok, lay between this hold's last successful acquire or renew returning and the
// renew being sent. That other grant certainly came after this hold's and before
// the renew, and a correct lock grants the key only once the previous lease is
// gone: the renew cannot have extended anything, it re-took the lock silently,
// under the old owner and fence. (An acquire merely completed in between is not
// enough: its grant may have come before this hold's, its reply late.)
//
// A write sent after a renew had failed is not this: its client was told, and a
// stale holder's write is what fencing is for (stale-write-accepted judges it).
//
// Time alone is not used as proof that a lease ran out: a client may keep its
// lease alive in the background without recording it (redis-semaphore's refresh
// timer, etcd3's keep-alive), and an etcd leader change extends every lease. A
// later grant to someone else is proof whatever the client did in between.
//
// Only a grant the lock could not have made beside this hold counts: under an rw
// lock, one of the two must be a write hold (two readers share the key rightly);
// a semaphore's holds share it up to its permits, and a grant beside one proves
// nothing of it, so semaphores are not judged here.
import type { Witness } from "../store/events.ts";
import { ms, quoteAcquire, quoteOp } from "./explain.ts";
import { eventsOf, holdsByAcquireEnd, RENEW, type Paired } from "./paired.ts";
import { OK } from "./table.ts";
import { readsOnly } from "./kinds/rw.ts";

export function lostLocksUnnoticed(m: Paired): Witness[] {
  const out: Witness[] = [];
  const { ops, holds } = m;
  if (m.kind?.lock === "semaphore") return out;
  const rw = m.kind?.lock === "rw";
  // Only a hold with a renew that returned ok can be a witness: the rest are
  // skipped without a walk through their operations, which lie all over the
  // columns (most runs renew seldom or never).
  const renewed = new Uint8Array(holds.length);
  let any = false;
  for (let i = 0; i < ops.length; i++) {
    if (ops.f[i] !== RENEW || ops.outcome[i] !== OK || ops.hold[i] < 0) continue;
    renewed[ops.hold[i]] = 1;
    any = true;
  }
  if (!any) return out;
  for (const key of m.holdsByKey.keys()) {
    const order = holdsByAcquireEnd(m, key);
    let ends: Float64Array | null = null;
    for (const h of order) {
      if (!renewed[h]) continue;
      ends ??= Float64Array.from(order, (o) => ops.endOf(holds.acquire[o]));
      const acquire = holds.acquire[h];
      // When this hold was last certainly granted (or extended) the lock.
      let granted = ops.endOf(acquire);
      let grantedBy = acquire;
      for (let r = holds.first[h]; r >= 0; r = ops.next[r]) {
        if (ops.f[r] === RENEW && ops.outcome[r] === OK) {
          const other = grantedBetween(m, order, ends, granted, ops.start[r], rw && readsOnly(m, h) ? (o) => !readsOnly(m, o) : () => true);
          if (other >= 0) {
            out.push(retaken(m, key, h, grantedBy, other, r));
            break;
          }
          granted = ops.endOf(r);
          grantedBy = r;
        }
        // A failed or unknown renew proves nothing here: the next grant decides.
      }
    }
  }
  return out;
}

/** A hold that `excludes` says could not share the key, whose acquire was invoked after `from` and returned ok before `to` (-1: none); `ends` are `order`'s acquire completions. */
function grantedBetween(m: Paired, order: Int32Array, ends: Float64Array, from: number, to: number, excludes: (other: number) => boolean): number {
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ends[mid] <= from) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < order.length && ends[i] < to; i++) if (m.ops.start[m.holds.acquire[order[i]]] > from && excludes(order[i])) return order[i];
  return -1;
}

function retaken(m: Paired, key: string, h: number, grantedBy: number, other: number, renew: number): Witness {
  const o = m.ops;
  const last = grantedBy === m.holds.acquire[h] ? `its ${quoteAcquire(m, h)}` : `its last successful ${quoteOp(m, grantedBy)}`;
  return {
    key,
    events: eventsOf(m, m.holds.acquire[h], grantedBy, m.holds.acquire[other], renew),
    explanation:
      `On key ${JSON.stringify(key)}, after ${last}, the lock was granted to another hold: ${quoteAcquire(m, other)}, ` +
      `so this hold's lease had run out by ${ms(o.endOf(m.holds.acquire[other]))}. Yet ${quoteOp(m, renew)} returned ok under the old owner: ` +
      `the client re-took the lock silently instead of learning it was lost, and goes on as its holder without a new acquire or fence.`,
  };
}
