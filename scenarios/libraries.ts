// Failures that users of lock libraries in other languages reported, reproduced
// through the reference adapter programs (adapters/, docs/adapter-protocol.md),
// each library used the way the report says its users used it. No fault is
// injected: the library does it by itself.
//
// L2 is redis-py #4279: a Lock made with timeout=0 ("held until released": SET
// without PX) and kept with reacquire(), which sends PEXPIRE key 0, deletes the
// key it holds and returns True. The holder goes on; the next client takes the
// free key at once.
//
// E1 is python-etcd3 #599: `with client.lock(name) as lock:` enters its body after
// __enter__'s acquire() waited its 10 s and failed, without looking at what it
// returned, so a second holder writes beside the first.
//
// L3 is python-redis-lock #85 (NotAcquired at the end of long jobs with
// auto_renewal=True): the renewal thread lives in the holder's process, so a
// process that stops (SIGSTOP here; a stalled worker there) stops renewing, the
// key lapses, and the holder goes on with its job. It learns of it only when
// release() raises NotAcquired, after it wrote. K6 is python-redis-lock #93
// (two celery workers got the lock at once with acquire(blocking=False)): it does
// not reproduce at 4.0.1; SET NX lets one of six simultaneous tries in.
//
// L4 is pottery #692 (extensions are capped: num_extensions, 3 by default):
// checked, not an anomaly at 3.0.1. The fourth extend() raises
// TooManyExtensions before sending anything, so the holder is told and stops; its
// lease ends at the third extension's TTL and the next client is granted then.
//
// The Go and Java libraries' users' reports are rows of their backends
// (backends/NAME/scenarios.ts): K7 (redsync PR #147), E2 (etcd #10811), L5
// (redisson #4698) and F3 (bsm/redislock #93).
import { ONE_HOLD_EACH, staleUnlessFenced, type Scenario } from "../core/scenario.ts";
import type { ScriptStep } from "../nemesis/index.ts";

/**
 * The Redis libraries here issue no fence: each hold's is taken from a Redis
 * counter, so the checker can judge the writes, and the resource does not check
 * it, so a stale write shows as stale-write-accepted (--fence on: refused).
 */
const COUNTER_FENCES_UNCHECKED = { fence: false, "fence-source": "single" } as const;

export const L2: Scenario = {
  id: "L2",
  title: "redis-py: reacquire() of a lock made with timeout=0 deletes the key (redis-py #4279)",
  shows:
    "client 0 takes redis-py's Lock made with timeout=0 (no expiry) and renews it with reacquire() every second; the first reacquire sends PEXPIRE key 0, which deletes the key, and says it succeeded; client 1, waiting since 500 ms, is granted the free key while client 0 still holds: mutex-violation",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redis",
    client: "redis-py-timeout-0",
    renew: true,
    concurrency: 2,
    workers: 2,
    // A 3 s lease, renewed every second: the certain spans are long enough that
    // client 1's grant, after a wait, still falls inside client 0's on a busy
    // machine (with 1 s, a first acquire slowed to 600 ms left them apart).
    ttl: 3000,
    // Client 0 holds from its grant to 2000 ms after it, past its first reacquire.
    work: 2000,
    stagger: 500,
    "acquire-timeout": 3000,
    "time-limit": 4,
    ...COUNTER_FENCES_UNCHECKED,
  },
  varies: {
    client: "redis-py: the Lock has the run's TTL and renews with extend(), which compares the token first; client 1 waits for client 0's release: the run is valid",
  },
  predict: (o) =>
    o.client === "redis-py-timeout-0"
      ? { anomalies: ["mutex-violation"], why: "client 0's reacquire deletes its own key and says ok, so client 1 is granted the key while client 0's hold is certainly valid" }
      : { anomalies: [], why: "client 0's renews keep its key; client 1 is granted it only after client 0 releases" },
};

export const E1: Scenario = {
  id: "E1",
  title: "python-etcd3: `with client.lock(...)` enters without the lock (python-etcd3 #599)",
  shows:
    "client 0 holds python-etcd3's Lock (a 20 s lease) for 12 s; client 1 takes it as `with client.lock(name) as lock:` from 500 ms: __enter__ waits its 10 s, its acquire() fails, and the body runs anyway, so client 1 holds at 10.5 s beside client 0: mutex-violation",
  options: {
    ...ONE_HOLD_EACH,
    backend: "etcd",
    client: "python-etcd3-with",
    concurrency: 2,
    workers: 2,
    // A lease that outlasts the hold, so client 0's hold is certainly valid throughout.
    ttl: 20_000,
    work: 12_000,
    stagger: 500,
    // Longer than __enter__'s own 10 s and client 0's 12 s hold: the library, not the harness, gives up.
    "acquire-timeout": 15_000,
    "time-limit": 14,
    fence: false,
  },
  varies: {
    client: "python-etcd3: acquire(timeout) as its documentation says, whose result the adapter reads; client 1 waits for client 0's release: the run is valid",
  },
  predict: (o) =>
    o.client === "python-etcd3-with"
      ? { anomalies: ["mutex-violation"], why: "client 1's with-body runs though its acquire() failed, while client 0's hold is certainly valid" }
      : { anomalies: [], why: "client 1 is granted the lock only after client 0 releases it" },
};

/**
 * Client 0's process (worker-1) frozen from 700 ms to 3200 ms: after its grant
 * (its program's start and first acquire take up to a few hundred ms) and longer
 * than a lease, so its key lapses by about 1700 ms whenever its thread last renewed.
 */
const FREEZE_HOLDER: ScriptStep = { atMs: 700, nemesis: "pause", fault: { targets: ["worker-1"], durationMs: 2500 } };

export const L3: Scenario = {
  id: "L3",
  title: "python-redis-lock: auto_renewal does not outlive a stopped process; the holder learns at release (python-redis-lock #85)",
  shows:
    "client 0 takes python-redis-lock's Lock(expire=1, auto_renewal=True) for a 3.5 s job; its process is SIGSTOPped at 700 ms for 2.5 s, renewal thread and all, so the key lapses; client 1 takes it at 2 s and writes; client 0 thaws and writes at 3.5 s, and only its release() raises NotAcquired: stale-write-accepted without fencing",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redis",
    client: "python-redis-lock",
    concurrency: 2,
    workers: 2,
    ttl: 1000,
    // The job: client 0 holds 3500 ms before writing (the workload waits; the
    // library's thread renews meanwhile, every 667 ms, unless frozen).
    pause: 3500,
    "pause-clients": ["0"],
    "pause-at": "acquire",
    work: 0,
    // Client 1 asks after the frozen key lapsed: SET NX takes it at once. A waiter
    // that came earlier would sleep in BLPOP for its whole timeout, since a lapse
    // pushes no signal.
    stagger: 2000,
    "acquire-timeout": 3000,
    "time-limit": 5,
    ...COUNTER_FENCES_UNCHECKED,
  },
  varies: {
    nemesis: "none: no freeze; the renewal thread keeps the key through the job, client 1 waits for client 0's release: the run is valid",
    fence: "on: the resource refuses client 0's late write: the run is valid",
  },
  script: (o) => ((o.nemesis as string[] | undefined)?.includes("none") ? [] : [FREEZE_HOLDER]),
  predict: (o) =>
    (o.nemesis as string[] | undefined)?.includes("none")
      ? { anomalies: [], why: "the renewal thread extends the key every 667 ms through the job; client 1 is granted it at client 0's release" }
      : staleUnlessFenced(o, "client 0's write (its frozen renewal thread let the key lapse)"),
};

export const K6: Scenario = {
  id: "K6",
  title: "python-redis-lock: acquire(blocking=False) from many clients at once grants one (python-redis-lock #93, does not reproduce at 4.0.1)",
  shows:
    "six clients in two workers try python-redis-lock's Lock(expire=5) with acquire(blocking=False) at the same moment, as #93's celery workers did; SET NX lets one in and the others fail busy: the run is valid",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redis",
    client: "python-redis-lock",
    concurrency: 6,
    workers: 2,
    // The one hold lasts past every client's try, however late its program starts.
    ttl: 5000,
    work: 3000,
    stagger: 0,
    // 0: acquire(blocking=False), one try.
    "acquire-timeout": 0,
    "time-limit": 4,
    ...COUNTER_FENCES_UNCHECKED,
  },
  varies: {
    concurrency: "more or fewer clients at once: still one grant",
  },
  predict: () => ({ anomalies: [], why: "one SET NX of the simultaneous tries succeeds; every other acquire fails busy and writes nothing" }),
};

export const L4: Scenario = {
  id: "L4",
  title: "pottery: the fourth extend() of a Redlock raises TooManyExtensions (pottery #692, no anomaly at 3.0.1)",
  shows:
    "client 0 holds pottery's Redlock (1 s auto_release_time, num_extensions 3) for 3 s, extending every 333 ms; the fourth extend() fails before sending anything, so client 0 is told and stops without writing; client 1 is granted the lock when the third extension's lease ends: the run is valid",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redlock",
    client: "pottery",
    renew: true,
    concurrency: 2,
    workers: 2,
    ttl: 1000,
    work: 3000,
    stagger: 300,
    "acquire-timeout": 4000,
    "time-limit": 4,
    ...COUNTER_FENCES_UNCHECKED,
  },
  varies: {
    fence: "on: the same; nothing stale is written to refuse",
  },
  predict: () => ({ anomalies: [], why: "client 0's fourth renew fails too-many-extensions and it stops using the hold before client 1 is granted" }),
};
