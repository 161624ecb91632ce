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
import { ONE_HOLD_EACH, type Scenario } from "../core/scenario.ts";

export const L2: Scenario = {
  id: "L2",
  title: "redis-py: reacquire() of a lock made with timeout=0 deletes the key (redis-py #4279)",
  shows:
    "client 0 takes redis-py's Lock made with timeout=0 (no expiry) and renews it with reacquire() every 333 ms; the first reacquire sends PEXPIRE key 0, which deletes the key, and says it succeeded; client 1 asks at 500 ms and is granted the free key while client 0 still holds: mutex-violation",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redis",
    client: "redis-py-timeout-0",
    renew: true,
    concurrency: 2,
    workers: 2,
    ttl: 1000,
    // Client 0 holds from its grant (well before 500 ms) to 2000 ms after it.
    work: 2000,
    stagger: 500,
    "acquire-timeout": 3000,
    "time-limit": 4,
    fence: false,
    // redis-py issues no fence: taken from a Redis counter, so the writes are judged too.
    "fence-source": "single",
  },
  varies: {
    client: "redis-py: the Lock has the run's TTL and renews with extend(), which compares the token first; client 1 waits for client 0's release: the run is valid",
  },
  script: () => [],
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
  script: () => [],
  predict: (o) =>
    o.client === "python-etcd3-with"
      ? { anomalies: ["mutex-violation"], why: "client 1's with-body runs though its acquire() failed, while client 0's hold is certainly valid" }
      : { anomalies: [], why: "client 1 is granted the lock only after client 0 releases it" },
};
