// F1 and F2: fencing tokens that are not what fencing needs, a number that only
// grows. F1: a counter that forgets (Redis restarted without persistence). F2: a
// "fence" made up from per-node counters of whichever majority granted (Redlock's
// common recipe), which different majorities push apart.
import type { ParsedOptions } from "../lib/index.ts";
import { ONE_HOLD_EACH, cut, type Prediction, type Scenario } from "../core/scenario.ts";

const staleIfUnfenced = (o: ParsedOptions): string[] => (o.fence ? [] : ["stale-write-accepted"]);

/** F1's kill of redis-1: after client 1's hold, before client 2's. */
const F1_KILL_MS = 1400;

export const F1: Scenario = {
  id: "F1",
  title: "Redis restarts without persistence and its fence counter starts again",
  shows: "clients 0 and 1 get fences 1 and 2; redis-1 is killed and restarts empty; client 2 gets fence 1 again: duplicate-fence and fence-regression, and the resource refuses client 2 (liveness lost)",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redis",
    client: "redis",
    concurrency: 3,
    workers: 3,
    ttl: 1000,
    // Holds at 0, 1000 and 2000 ms, each about 100 ms long; redis-1 is down from 1400 ms for 200 ms.
    work: 100,
    stagger: 1000,
    "acquire-timeout": 500,
    "time-limit": 3,
    "restart-delay": 200,
    "redis-persistence": "none",
    fence: true,
  },
  varies: {
    "redis-persistence": "always (or everysec: a SIGKILL loses nothing the kernel has): the counter survives, client 2 gets fence 3, the run is valid",
    fence: "off: the resource also accepts client 2's write with fence 1 after fence 2 (stale-write-accepted)",
    "restart-delay": "how long redis-1 stays down (client 2 starts at 2000 ms)",
  },
  script: (o) => [{ atMs: F1_KILL_MS, nemesis: "kill", fault: { targets: ["redis-1"], durationMs: o["restart-delay"] as number } }],
  predict: (o): Prediction => {
    if (o["redis-persistence"] !== "none") return { anomalies: [], why: "redis-1 wrote the counter to its AOF before it answered: it comes back at 2 and client 2 gets 3" };
    if (F1_KILL_MS + (o["restart-delay"] as number) > 2000 - 300) return { anomalies: null, why: "redis-1 comes back too close to client 2's start (2000 ms) to call it" };
    return {
      anomalies: ["duplicate-fence", "fence-regression", ...staleIfUnfenced(o)],
      why: "redis-1 came back with no counter: client 2's INCR gives 1 again, after client 1's 2",
    };
  },
};

/** F2's partitions: the first until the fourth hold is done, the second before the fifth starts. */
const F2_STAGGER_MS = 1000;

export const F2: Scenario = {
  id: "F2",
  title: "Redlock fence = the largest INCR of the granting majority",
  shows: "four holds alternate between majorities {1,2,3} and {1,4,5}, pushing redis-1's counter to 4 and the others' to 2; a fifth hold on {2,3,4} gets fence 3: fence-regression and duplicate-fence",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redlock",
    client: "redlock",
    concurrency: 5,
    workers: 2,
    ttl: 1000,
    // Clients 0, 2, 4 run in worker-1, clients 1, 3 in worker-2; client i's hold starts at i s and lasts about 300 ms.
    work: 100,
    stagger: F2_STAGGER_MS,
    "acquire-timeout": 500,
    "command-timeout": 1000,
    "time-limit": 5,
    fence: true,
    "fence-source": "max-incr",
    // Cut links refuse connections (see K3's note in redlock.ts).
    "partition-mode": "reset",
  },
  varies: {
    "fence-source": "single: one counter (redis-1) only grows; client 4, cut from it, gets no fence (its acquire ends unknown)",
    fence: "off: the resource also accepts client 4's write with fence 3 after fence 4 (stale-write-accepted)",
    client: "node-redlock or node-redlock-4: the recipe is the same whatever client takes the majority",
    },
  script: () => [
    // Holds 0-3: worker-1 reaches {1,2,3}, worker-2 reaches {1,4,5}.
    { atMs: 0, nemesis: "partition", fault: { targets: [...cut(1, ["redis-4", "redis-5"]), ...cut(2, ["redis-2", "redis-3"])], durationMs: 3.4 * F2_STAGGER_MS } },
    // Hold 4 (at 4 s): worker-1 reaches {2,3,4}.
    { atMs: 3.6 * F2_STAGGER_MS, nemesis: "partition", fault: { targets: cut(1, ["redis-1", "redis-5"]), durationMs: null } },
  ],
  predict: (o) =>
    o["fence-source"] === "single"
      ? { anomalies: [], why: "every fence comes from redis-1's counter, which only grows; the hold cut from it gets none" }
      : {
          anomalies: ["fence-regression", "duplicate-fence", ...staleIfUnfenced(o)],
          why: "counters after four holds: redis-1 4, the others 2; the fifth hold's majority {2,3,4} tops out at 3",
        },
};
