// The lock kinds' known failures (issue 29): a reentrant lock's count, a
// reentrant lock's lease meeting a pause, a semaphore's permit count, and a
// reader's lease under a writer. Each hold's depth and each acquire's mode are
// drawn from the seed (workloads/holds.ts); each scenario fixes a seed whose draws
// give the depths and modes it needs (1, W1's 2), and makes no call for another.
//
// R1: the reentrant lock whose release deletes the hash whatever the count. Client
// 0 enters twice; its inner release frees the lock, and while its outer block
// still works client 1 is granted it.
//
// R2: a reentrant lease meeting a pause (where reentrancy meets renewal). Client 0
// re-enters late in its lease and is paused after each re-entry: a re-entry that
// refreshes the lease (Redisson's RLock does) carries the hold past the pause, one
// that does not leaves it to end at the first acquire's TTL while client 0 sleeps.
//
// W1: an rw lock's reader paused past its lease: the writer gets in and writes,
// and the reader's late read carries a fence below the write's.
//
// S1: the semaphore whose count is read (GET), then raised (INCR) in a second round
// trip. A slow network (200 ms each way) widens the gap between the two at the
// server to 400 ms: three clients that ask within it all read a count below 2.
import { ONE_HOLD_EACH, link, otherSeed, type Scenario } from "../core/scenario.ts";

export const R1: Scenario = {
  id: "R1",
  title: "a reentrant lock whose inner release frees the outer hold",
  shows:
    "client 0 takes the reentrant lock (a 5 s lease), enters again (depth 2) and releases the re-entry at about 450 ms; redis-reentrant-unsafe-release deletes the hash whatever the count, so client 1, waiting since 200 ms, is granted the lock while client 0's outer block still works (1.5 s before its outer release): reentrancy-violation",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redis",
    client: "redis-reentrant-unsafe-release",
    lock: "reentrant",
    // Seed 1 draws depth 2 for client 0's hold and depth 1 for client 1's.
    "max-depth": 2,
    concurrency: 2,
    workers: 2,
    // A lease that outlasts the hold: only the inner release can free the lock.
    ttl: 5000,
    // Client 0: granted at ~0 ms, writes at 300 ms, re-enters, writes at ~450 ms,
    // releases the re-entry, then works 1.5 s more before its outer release.
    work: 300,
    pause: 1500,
    "pause-at": "release",
    "pause-clients": ["0"],
    stagger: 200,
    "acquire-timeout": 3000,
    "time-limit": 3,
  },
  varies: {
    client: "redis-reentrant: a release lowers the count and frees the lock only at 0, so client 1 is granted it after client 0's outer release: valid",
    fence: "off: the same (the lock, not the resource, is at fault)",
  },
  predict: (o) =>
    otherSeed(o, 1) ??
    (o.client === "redis-reentrant-unsafe-release"
      ? { anomalies: ["reentrancy-violation"], why: "client 0's inner release (depth 2) deleted the hash, and client 1 was granted the lock while client 0's outer hold was certainly valid" }
      : { anomalies: [], why: "the inner release lowers the count to 1 and frees nothing; client 1 is granted the lock after client 0's outer release" }),
};

/** R2's lease; client 0 pauses this long after each re-entry. */
const R2_TTL = 3000;
const R2_PAUSE = 1800;

export const R2: Scenario = {
  id: "R2",
  title: "a re-entry that refreshes the TTL versus one that does not, under a pause",
  shows:
    "client 0 takes a 3 s lease, re-enters at 300 ms and again at about 2.2 s (depth 3), pausing 1.8 s after each re-entry; redis-reentrant-no-refresh leaves the lease to end at 3 s, client 1 (waiting since 500 ms) takes the lock and writes, and client 0 writes at depth 3 at about 4.1 s: stale-write-accepted without fencing, refused with it; redis-reentrant's re-entry at 2.2 s refreshed the lease to 5.2 s and nobody else gets in",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redis",
    client: "redis-reentrant-no-refresh",
    lock: "reentrant",
    // Seed 1 draws depth 3 for client 0's hold.
    "max-depth": 3,
    concurrency: 2,
    workers: 2,
    ttl: R2_TTL,
    // Client 0: writes at 300 ms, re-enters (depth 2), pauses, writes at ~2.2 s,
    // re-enters (depth 3, 800 ms before its first lease ends), pauses, writes at ~4.1 s.
    // Client 1 takes a lease that ran out at 3 s and writes at ~3.3 s.
    work: 300,
    pause: R2_PAUSE,
    "pause-at": "reenter",
    "pause-clients": ["0"],
    stagger: 500,
    // Waits out client 0's refreshed hold too (to ~4.1 s).
    "acquire-timeout": 5000,
    "time-limit": 2,
    fence: false,
  },
  varies: {
    client: "redis-reentrant: each re-entry refreshes the lease (to about 5.2 s at the second), client 0's hold outlives the pause, client 1 is granted the lock after client 0's release: valid",
    fence: "on: the resource refuses client 0's depth-3 write (fence 1, after client 1's fence 2): valid, the refusal in stats.rejected_writes",
  },
  predict: (o) => {
    const other = otherSeed(o, 1);
    if (other) return other;
    if (o.client !== "redis-reentrant-no-refresh") return { anomalies: [], why: "the re-entry at about 2.2 s refreshed the lease past client 0's depth-3 write and release; client 1 is granted the lock after them" };
    return o.fence
      ? { anomalies: [], why: "client 0's lease ran out at the first acquire's TTL and client 1 took the lock, but the resource refuses client 0's late write (fence 1 after fence 2)" }
      : {
          anomalies: ["stale-write-accepted", "interleaved-writers"],
          why: "client 0's lease ran out at the first acquire's TTL while it slept after re-entering; client 1 took the lock and wrote, and client 0's depth-3 write was accepted after it, between client 1's",
        };
  },
};

/** S1's latency on every client's link to Redis, each way. */
const S1_LATENCY = 200;

export const S1: Scenario = {
  id: "S1",
  title: "a semaphore whose permit count is read then written (two clients take the last permit)",
  shows:
    "a semaphore of 2 permits; every client's link to Redis is slowed 200 ms each way; clients 0, 1 and 2 ask at 0, 100 and 200 ms; redis-semaphore-racy GETs the count and INCRs it a round trip later, so all three read a count below 2 before any INCR lands and all three hold at once: semaphore-overflow",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redis",
    client: "redis-semaphore-racy",
    lock: "semaphore:2",
    concurrency: 3,
    workers: 3,
    // Longer than the slow grants and the holds: the three are certainly valid together.
    ttl: 5000,
    work: 1000,
    stagger: 100,
    "acquire-timeout": 4000,
    "time-limit": 1,
  },
  varies: {
    client: "redis-semaphore-counting (redis-semaphore's Semaphore, one Lua script per try; fences from --fence-source single): the third client waits for a permit: valid",
    "fence-source": "with redis-semaphore-counting or redis-multi-semaphore, where a hold's fence comes from (single unless set)",
  },
  // redis-semaphore's holds carry no fence: a Redis counter's, so that the resource judges their writes.
  fit: (o) => {
    if (o.client !== "redis-semaphore-racy" && o["fence-source"] === undefined) o["fence-source"] = "single";
  },
  script: () => [{ atMs: 0, nemesis: "latency", fault: { targets: [1, 2, 3].map((w) => link(w, "redis-1")), latencyMs: S1_LATENCY, jitterMs: 0, durationMs: 4000 } }],
  predict: (o) =>
    o.client === "redis-semaphore-racy"
      ? { anomalies: ["semaphore-overflow"], why: "the three clients read the count before any of their INCRs landed, and three held a semaphore of 2 at once" }
      : { anomalies: [], why: "the count is read and raised in one script: the third client waits until a permit is given back" },
};

export const W1: Scenario = {
  id: "W1",
  title: "a reader's lease expiring under a writer",
  shows:
    "etcd read-write lock: client 0 takes it to read (a 1 s lease) and stops for 2.5 s before reading; its lease expires and etcd deletes its read key, client 1 (asking to write since 300 ms) takes the lock and writes; client 0 wakes and reads with its old fence: the resource refuses the read (stats.stale_reads_refused), and the run is valid",
  options: {
    ...ONE_HOLD_EACH,
    // Seed 2 draws a read for client 0's hold and a write for client 1's at --read-ratio 0.5.
    seed: 2,
    backend: "etcd",
    client: "etcd-rw",
    lock: "rw",
    "read-ratio": 0.5,
    concurrency: 2,
    workers: 2,
    ttl: 1000,
    // Client 0 reads at about 2.6 s; client 1 is granted at about 1 to 1.5 s (the lease and etcd's expiry) and writes 100 ms later.
    work: 100,
    pause: 2500,
    "pause-clients": ["0"],
    stagger: 300,
    "acquire-timeout": 3000,
    "time-limit": 1,
    fence: true,
  },
  varies: {
    client: "zookeeper-rw (with --backend zookeeper): the same, with a session in place of the lease",
    backend: "zookeeper, with --client zookeeper-rw",
    fence: "off: the resource hands client 0 client 1's value, a stale read; the run is still valid, for the lock kept its promise (client 0's lease had expired) and the read is the holder's to check",
  },
  predict: (o) =>
    otherSeed(o, 2) ??
    (o.fence
      ? { anomalies: [], why: "client 0's lease expired before client 1 was granted, so the lock kept its promise; the resource refuses client 0's late read, whose fence is below client 1's write (counted in stats.stale_reads_refused)" }
      : { anomalies: [], why: "client 0's lease expired before client 1 was granted, so the lock kept its promise; without fencing the resource answers client 0's late read with client 1's value, which nothing here calls an anomaly" }),
};

export const W2: Scenario = {
  id: "W2",
  title: "a read-write lock whose writer waits for older writers only",
  shows:
    "etcd read-write lock with one prefix wrong (etcd-rw-writer-naive, kept on purpose): client 0 takes it to read and holds it for 1.5 s; client 1 asks to write at 300 ms and, waiting only for older write keys, is granted at once: a write hold and a read hold certainly valid together: rw-violation",
  options: {
    ...W1.options,
    client: "etcd-rw-writer-naive",
    // Both hold well inside their leases: the overlap is the lock's, not a lease's.
    ttl: 3000,
    work: 1500,
    pause: 0,
  },
  varies: {
    client: "etcd-rw: the writer waits for client 0's read key to go, and is granted when client 0 releases: valid",
    fence: "off: the same (the lock, not the resource, is at fault)",
  },
  predict: (o) =>
    otherSeed(o, 2) ??
    (o.client === "etcd-rw-writer-naive"
      ? { anomalies: ["rw-violation"], why: "client 1's write hold was granted while client 0's read hold was certainly valid" }
      : { anomalies: [], why: "client 1's writer waits for client 0's read key, and is granted when it releases" }),
};
