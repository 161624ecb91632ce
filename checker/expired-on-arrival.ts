// expired-on-arrival: an acquire returned ok with a hold whose lease its own client
// reports as already spent (`validity_ms` <= 0 in the ok value). Redlock's rule is
// that a quorum which came back after the lease's validity is no lock at all; a
// library that returns it anyway (node-redlock #296, K5) hands its caller a lock it
// cannot safely use, and nothing in the caller's code says so.
//
// Only the client can say this: the history alone bounds a lease's start from
// below (the request left at the invoke), never from above, so it cannot prove a
// lease had run out by the time the ok came back. A client that reports no
// validity is never flagged.
import type { Witness } from "../store/events.ts";
import { quoteAcquire, quoteOp } from "./explain.ts";
import { ACQUIRE, eventsOf, type Paired } from "./paired.ts";
import { OK } from "./table.ts";

export function expiredOnArrival(m: Paired): Witness[] {
  const out: Witness[] = [];
  const { ops } = m;
  // Every acquire that returned ok, a re-entry's too: a re-entry handed over spent is as unusable.
  const spent = [...m.validity].filter(([a, validity]) => validity <= 0 && ops.f[a] === ACQUIRE && ops.outcome[a] === OK && ops.key[a] >= 0).sort((x, y) => x[0] - y[0]);
  for (const [a, validity] of spent) {
    const key = m.keys.names[ops.key[a]];
    const h = ops.hold[a];
    const quoted = h >= 0 && m.holds.acquire[h] === a ? quoteAcquire(m, h) : quoteOp(m, a);
    out.push({
      key,
      events: eventsOf(m, a),
      explanation:
        `On key ${JSON.stringify(key)}, ${quoted} returned a hold whose lease of ${ops.ttl[a]} ms its client ` +
        `reported as already spent (validity_ms ${validity}): by the client's own count the lock had expired before the caller got it, ` +
        `yet the acquire said ok, so the caller goes on as holder of a lock that another client may already have.`,
    });
  }
  return out;
}
