// One Redis server's rows of the catalogue that are its libraries' users' reports
// (the Python libraries' are in scenarios/libraries.ts).
//
// L5 is redisson #4698 ("Add a callback on lock renewal failure", open; its PR
// #7254 is not merged, and Redisson 4.7.0 has no such listener): an RLock taken
// without a lease time is kept by the watchdog, which renews it every third of
// lockWatchdogTimeout; when a renewal fails, Redisson logs "Can't update locks
// ... expiration" and nothing else, so the holder goes on with its work after
// the lease lapsed (#5697 and #5698 are users who saw two holders that way).
// Here the holder's link to Redis is cut for longer than the watchdog timeout:
// the key lapses, the waiter takes it and writes, the cut heals, and the holder,
// told nothing, writes after it.
//
// F3 is bsm/redislock #93 ("optional fencing token minted atomically on
// Obtain", after Kleppmann): a holder paused past its TTL acts after another
// has taken over, and only a token checked at the resource stops it. Its PR #94
// (Options.FenceKey) is merged but in no release: v0.9.4, the newest, mints no
// token, and Release is the first call that can tell the holder (ErrLockNotHeld),
// after its write. With --fence on the run's fence comes from fencecheck's Redis
// counter (--fence-source single), standing in for the FenceKey #94 adds.
import { FROZEN_PAST_LEASE, ONE_HOLD_EACH, link, staleUnlessFenced, type Scenario } from "../../core/scenario.ts";

/**
 * L5's moments. Each program's Redisson client is made before the clients start
 * (its init waits for it: adapters/java/redisson; made meanwhile it took 5 to 8 s
 * of a loaded machine, and client 0, still connecting at the cut, was never
 * granted): client 0 asks at 0 and holds at once; client 1 asks at 2500 ms, so
 * it cannot be first, and waits. The cut starts at 5000 ms, well after client 0's
 * grant, and lasts past the lease (1 s) and client 1's grant.
 */
const L5_CUT_AT = 5000;
const L5_CUT_MS = 3000;

export const L5: Scenario = {
  id: "L5",
  title: "Redisson: the watchdog's failed renewal is only logged; the holder writes after its lease lapsed (redisson #4698)",
  shows:
    "client 0 holds Redisson's RLock (no lease time: the watchdog renews it, lockWatchdogTimeout 1 s) for an 8 s job; its link to Redis is cut from 5000 ms to 8000 ms, the renewals fail and are only logged, and the key lapses; client 1, waiting since 2500 ms, takes the lock and writes; client 0, never told, writes after it: stale-write-accepted without fencing",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redis",
    client: "redisson",
    concurrency: 2,
    workers: 2,
    // lockWatchdogTimeout (the adapter sets it to the run's TTL): renewed every 333 ms.
    ttl: 1000,
    // The job: client 0 writes 8000 ms after its grant (at about 8 s), some two
    // seconds after client 1's write, which follows the lapse (by 6 s).
    pause: 8000,
    "pause-clients": ["0"],
    "pause-at": "acquire",
    work: 0,
    stagger: 2500,
    // Client 1 waits from 2500 ms until the lapse, about 6 s.
    "acquire-timeout": 7000,
    "time-limit": 11,
    // Fences from the Redis counter (taken at each grant, before the cut); the resource does not check them.
    fence: false,
    "fence-source": "single",
  },
  varies: {
    fence: "on: the resource refuses client 0's late write (its counter fence is lower): the run is valid",
    client: "redisson-fenced: RFencedLock, the same watchdog; with --fence on its own token refuses the late write",
  },
  // RFencedLock's fence is its own token: no counter to take one from.
  fit: (o) => {
    if (o.client === "redisson-fenced") delete o["fence-source"];
  },
  script: () => [{ atMs: L5_CUT_AT, nemesis: "partition", fault: { targets: [link(1, "redis-1")], durationMs: L5_CUT_MS } }],
  predict: (o) => staleUnlessFenced(o, "client 0's write (its watchdog's renewals failed during the cut and the key lapsed; Redisson only logged it)"),
};

export const F3: Scenario = {
  id: "F3",
  title: "bsm/redislock: a holder paused past its TTL writes after the next holder, and v0.9.4 mints no fencing token (bsm/redislock #93)",
  shows:
    "client 0 obtains bsm/redislock's lock (1 s TTL) and stops for 2.5 s before writing (a GC pause; the library renews nothing by itself); client 1, retrying every 100 ms, obtains it when the key expires and writes; client 0 wakes and writes, and learns only at Release (ErrLockNotHeld): stale-write-accepted without a fence",
  options: {
    ...FROZEN_PAST_LEASE,
    backend: "redis",
    client: "bsm-redislock",
    // v0.9.4 gives no token: the checker's fences come from a Redis counter, unchecked by the resource.
    "fence-source": "single",
  },
  varies: {
    fence: "on: the resource compares the counter's fences, as #94's FenceKey token would be compared, and refuses client 0's write: the run is valid",
  },
  predict: (o) => staleUnlessFenced(o, "client 0's write (its key expired while it was stopped; nothing in v0.9.4 told it)"),
};
