// K3, K4, K5: Redlock's own arguments (Kleppmann's, answered by antirez), each on
// real processes. In K3 and K4 the lock service itself grants two majorities at
// once; in K5 a client trusts answers that were true when sent and stale when read.
//
// K3 and K4 need two clients that reach different majorities: client 0 runs in
// worker-1, cut from redis-4 and redis-5 for the whole run, so it can only hold
// redis-1..3; client 1 runs in worker-2, cut from redis-1 and redis-2, so it can
// only take redis-3..5. redis-3 is the node they share, and the one the fault hits.
//
// K7 is K4 through go-redsync/redsync v4.18.1 (--client redsync), as its users
// reported it in redsync PR #147 ("Perform a SET if extending fails"): Redis
// nodes kept in memory only, one restarted, and the locks it held are gone from
// it. redsync answered with WithSetNXOnExtend (PR #149), off by default, which
// puts the key back only at the holder's next Extend; nothing stops a waiter
// that reaches the restarted node before that.
import type { ParsedOptions } from "../../lib/index.ts";
import type { ScriptStep } from "../../nemesis/index.ts";
import { ONE_HOLD_EACH, cut, type Prediction, type Scenario } from "../../core/scenario.ts";

/** Two clients, two workers, one hold each; holds long enough to overlap. */
const TWO_MAJORITIES = {
  ...ONE_HOLD_EACH,
  backend: "redlock",
  client: "redlock",
  concurrency: 2,
  workers: 2,
  ttl: 3000,
  // Below the TTL, so node-redlock-4 (which waits for every node) still acquires within its validity.
  "command-timeout": 1000,
  fence: false,
  "fence-source": "none",
  // Cut links refuse connections. Dropped data (timeout) would cost every client its
  // command timeout at its first connect (ioredis awaits its HELLO handshake), moving
  // its acquire off the moment the script counts on.
  "partition-mode": "reset",
};

const splitMajorities: ScriptStep = { atMs: 0, nemesis: "partition", fault: { targets: [...cut(1, ["redis-4", "redis-5"]), ...cut(2, ["redis-1", "redis-2"])], durationMs: null } };

const FENCE_VARIES = {
  client: "node-redlock or node-redlock-4: every Redlock client shows it",
  "fence-source": "max-incr: holds carry fences too (single: client 1 cannot reach redis-1 for its fence, so its acquire ends unknown)",
  fence: "on, with a fence source: the resource compares fences as well",
};

/** With `single`, client 1 (cut from redis-1) never gets its fence: its acquire ends unknown and no checker can count that hold. */
const singleFence = (o: ParsedOptions): Prediction | null =>
  o["fence-source"] === "single"
    ? { anomalies: null, why: "client 1 cannot reach redis-1, the single fence node: its acquire ends unknown (info), so the overlap cannot be proved" }
    : null;

export const K3: Scenario = {
  id: "K3",
  title: "Redlock: a clock jump on one node lets two clients hold a majority",
  shows: "client 0 holds redis-1,2,3; redis-3's clock jumps 9 s ahead and expires the key; client 1 takes redis-3,4,5: two majorities at once, a mutex-violation",
  options: {
    ...TWO_MAJORITIES,
    // Client 0 holds from 0 to about 2100 ms; client 1 takes its majority at about 1300 ms.
    work: 2000,
    stagger: 1000,
    "acquire-timeout": 2000,
    "time-limit": 3,
  },
  varies: FENCE_VARIES,
  script: () => [splitMajorities, { atMs: 500, nemesis: "clock", fault: { targets: ["redis-3"], mode: "bump", offsetMs: 9000, durationMs: 2000 } }],
  predict: (o) =>
    singleFence(o) ?? { anomalies: ["mutex-violation"], why: "redis-3 expired client 0's key by its own clock, so client 1 got a majority while client 0's lease still ran" },
};

/** K4's kill of redis-3, and when the run is long enough to see it back. */
const KILL_AT_MS = 500;
const K4_RELEASE_MS = 2500;

export const K4: Scenario = {
  id: "K4",
  title: "Redlock: a node that granted the lock restarts without it",
  shows: "client 0 holds redis-1,2,3; redis-3 is killed and restarts empty (no persistence); client 1 takes redis-3,4,5: a mutex-violation. --redis-persistence always, or a restart delay above the TTL, prevents it",
  options: {
    ...TWO_MAJORITIES,
    // Client 0 holds from 0 to about 2600 ms; redis-3 is back at about 1000 ms; client 1 starts at 1500 ms.
    work: K4_RELEASE_MS,
    stagger: 1500,
    "acquire-timeout": 4000,
    "time-limit": 3,
    "restart-delay": 300,
    "redis-persistence": "none",
  },
  varies: {
    ...FENCE_VARIES,
    "redis-persistence": "always (or everysec: a SIGKILL loses nothing the kernel has): redis-3 comes back with the key and refuses client 1",
    "restart-delay": "above the TTL (e.g. 3500): redis-3 is back only after client 0's lease has ended",
  },
  // The run lasts until redis-3 is back, so a long restart delay is seen through, not cut short by the final heal.
  fit: (o) => {
    o["time-limit"] = Math.max(o["time-limit"] as number, Math.ceil((KILL_AT_MS + (o["restart-delay"] as number)) / 1000) + 1);
  },
  script: (o) => [splitMajorities, { atMs: KILL_AT_MS, nemesis: "kill", fault: { targets: ["redis-3"], durationMs: o["restart-delay"] as number } }],
  predict: (o) => {
    const single = singleFence(o);
    if (single) return single;
    const delay = o["restart-delay"] as number;
    if (o["redis-persistence"] !== "none")
      return { anomalies: [], why: "redis-3 wrote the key to its AOF before it answered, so it comes back holding it for client 0 and refuses client 1" };
    if (delay >= (o.ttl as number) - KILL_AT_MS)
      return { anomalies: [], why: "redis-3 stays down until client 0's lease has ended, so it has nothing to forget" };
    if (KILL_AT_MS + delay > K4_RELEASE_MS - 1000)
      return { anomalies: null, why: "redis-3 comes back too close to client 0's release to call it" };
    const dup = o["fence-source"] === "max-incr" ? ["duplicate-fence"] : [];
    return {
      anomalies: ["mutex-violation", ...dup],
      why: `redis-3 came back empty and granted client 1 a majority while client 0's lease still ran${dup.length ? "; its fence counter started again too, so both holds got fence 1" : ""}`,
    };
  },
};

export const K5: Scenario = {
  id: "K5",
  title: "Redlock: a client trusts replies it read after the lease had expired",
  shows: "client 0 gets all five OKs, then stalls 4 s (a 3 s lease) before deciding; client 1 takes all five; without the validity check client 0 believes it holds the lock too, and an increment is lost",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redlock",
    client: "redlock",
    workload: "counter",
    concurrency: 2,
    workers: 2,
    ttl: 3000,
    // Client 0 sends at 0 ms and decides at 4000 ms; client 1 tries from 500 ms, takes
    // all five when the keys expire (3000-3300 ms), reads 0 and writes 1 at about 4600 ms.
    // Client 0, if it goes on, reads 0 at 4000 ms and writes 1 at 5500 ms.
    pause: 4000,
    "pause-at": "replies",
    "pause-clients": ["0"],
    work: 1500,
    stagger: 500,
    // Past client 1's wait for the expiry; short of client 0's stall, so a refused client 0 does not try again.
    "acquire-timeout": 3500,
    "time-limit": 1,
    fence: false,
    "fence-source": "none",
    "redlock-check-validity": false,
  },
  varies: {
    "redlock-check-validity": "on: client 0 computes validity = TTL - elapsed - drift < 0 and refuses the lock; the run is valid",
  },
  predict: (o) =>
    o["redlock-check-validity"]
      ? { anomalies: [], why: "client 0 finds its validity negative and refuses the lock (acquire fails, expired): only client 1 holds it" }
      : { anomalies: ["lost-update", "expired-on-arrival"], why: "client 0 trusts the stale OKs (its own validity is negative: expired-on-arrival) and reads the counter while client 1 holds the lock: both write 1" },
};

/** K7's moments: redsync's grant comes within the first second (a Go program, five connections). */
const K7_KILL_AT_MS = 1500;

export const K7: Scenario = {
  id: "K7",
  title: "redsync: a node kept in memory restarts without the lock (redsync PR #147)",
  shows:
    "client 0 holds go-redsync's Mutex on redis-1,2,3 (a 5 s lease); redis-3 is killed at 1500 ms and restarts empty (no persistence); client 1 asks at 2500 ms and takes redis-3,4,5 while client 0 still holds: a mutex-violation. --redis-persistence always prevents it",
  options: {
    ...TWO_MAJORITIES,
    client: "redsync",
    // A lease that outlasts both grants on a slow machine; redsync gives each try 5 % of it (250 ms) per node.
    ttl: 5000,
    // Client 0 holds from its grant (by 1 s) for 4 s; client 1 takes its majority at about 2500 ms.
    work: 4000,
    stagger: 2500,
    "acquire-timeout": 4000,
    "time-limit": 5,
    "restart-delay": 300,
    "redis-persistence": "none",
  },
  varies: {
    "redis-persistence": "always: redis-3 comes back with client 0's key and refuses client 1, which cannot make a majority: the run is valid",
  },
  script: (o) => [splitMajorities, { atMs: K7_KILL_AT_MS, nemesis: "kill", fault: { targets: ["redis-3"], durationMs: o["restart-delay"] as number } }],
  predict: (o) =>
    o["redis-persistence"] !== "none"
      ? { anomalies: [], why: "redis-3 wrote the key to its AOF before it answered, so it comes back holding it for client 0 and refuses client 1" }
      : { anomalies: ["mutex-violation"], why: "redis-3 came back empty and granted client 1 a majority while client 0's lease still ran" },
};
