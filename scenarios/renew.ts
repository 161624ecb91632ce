// L1: a renew that re-takes a lock its client had lost. The holder renews with a
// watchdog, is frozen past its lease, and the next client takes the lock. When the
// holder thaws, its watchdog's renew fires: a renew that checks the owner fails
// and the holder stops; one that sets the key blindly (redis-semaphore #175's
// shape, etcd3 #110's effect) says ok, and the holder goes on as if nothing had
// happened, now next to the client the lock was granted to.
import { ONE_HOLD_EACH, type Scenario } from "../core/scenario.ts";

export const L1: Scenario = {
  id: "L1",
  title: "a renew re-takes a lost lock without noticing",
  shows: "client 0 holds a 1 s lease with a watchdog renewing every 333 ms and is SIGSTOPped at 200 ms for 2 s; client 1 takes the lock when the lease ends; client 0 thaws and its renew, a blind SET PX, says ok: lost-lock-unnoticed",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redis",
    client: "redis-blind-renew",
    renew: true,
    concurrency: 2,
    workers: 2,
    ttl: 1000,
    // Client 0 holds from 0 ms and would write at 3000 ms. Client 1 asks from 300 ms
    // (after client 0's grant, which the checker needs to order the two grants) and
    // gets the lock when client 0's lease ends, about 1000 ms.
    work: 3000,
    stagger: 300,
    "acquire-timeout": 3000,
    "time-limit": 4,
    fence: false,
  },
  varies: {
    client: "redis: the renew compares the owner first, fails not-owner, and client 0 stops: the run is valid",
    fence: "on: fencing refuses stale writes, but the lock itself still re-took the key: lost-lock-unnoticed either way",
  },
  // Before client 0's first renew (333 ms), so its last grant is its acquire.
  script: () => [{ atMs: 200, nemesis: "pause", fault: { targets: ["worker-1"], durationMs: 2000 } }],
  predict: (o) =>
    o.client === "redis-blind-renew"
      ? { anomalies: ["lost-lock-unnoticed"], why: "client 0's renew after thawing sets the key over client 1's grant and says ok" }
      : { anomalies: [], why: "client 0's renew finds client 1's owner in the key and fails; client 0 stops without writing" },
};
