// M1-M4: the seed's replicated lock manager (--client lockserver-majority: a
// majority of five independent lock servers, no consensus between them), and
// where it breaks. Each is one of the catalogue's shapes on our own servers:
//
// M1 is K1: a holder frozen past its lease. Every server's lease runs out, the
//    next waiter gets a majority, the frozen holder writes late. The lock did
//    what a lease lock can; only the fence refuses the write.
// M2 is K4: a server that granted the lock restarts without its journal and
//    grants it again. Two majorities share that server, so two clients hold at
//    once: a mutex-violation no fence can prevent.
// M3 is F2 and worse: each server counts its own grants, so the fence "the
//    largest of the majority's" depends on which majority granted. Four holds
//    alternate between {1,2,3} and {1,4,5}, which takes lockserver-1's counter
//    to 4 and the others' to 2. Client 4 then holds {1,2,3} (fence 5) and is
//    frozen past its lease; client 5, whose link to lockserver-1 is slow, gets
//    its majority from the other four, and any three of them include
//    lockserver-2 or -3, at 4 by then: fence 4, hold 3's again (duplicate-fence)
//    and below client 4's 5 (fence-regression). The resource refuses client 5's
//    write (4 is not above hold 3's 4) and takes the frozen holder's late one
//    (5). Fencing is on and a stale write lands anyway.
// M4 is M3 with the fence from one counter (lockserver-1's): it only rises, so
//    client 5's fence is above client 4's and the late write is refused.
import type { ParsedOptions } from "../../lib/index.ts";
import type { ScriptStep } from "../../nemesis/index.ts";
import { FROZEN_PAST_LEASE, ONE_HOLD_EACH, link, staleUnlessFenced, type Prediction, type Scenario } from "../../core/scenario.ts";

const MAJORITY = { backend: "lockserver", client: "lockserver-majority" };

/** Cut worker w from each of `servers` (lockserver-N numbers). */
const cutFrom = (worker: number, servers: number[]): string[] => servers.map((n) => link(worker, `lockserver-${n}`));

export const M1: Scenario = {
  id: "M1",
  title: "a majority of lock servers: a holder pauses past its lease, then writes",
  shows:
    "client 0 holds a majority of five lock servers on a 1 s lease and stops for 2.5 s; every server's lease runs out and client 1, queued on all five, gets them; client 0 wakes and writes: accepted without fencing, refused with it",
  // K1's clients and moments: client 0 holds from 0 ms and writes at 2500 ms; client 1 queues on every server from 300 ms and is granted when the leases end (1000 ms).
  options: { ...FROZEN_PAST_LEASE, ...MAJORITY, "fence-source": "single" },
  varies: {
    fence: "on: the resource refuses client 0's write (its fence is lower than client 1's) and the run is valid",
    "fence-source": "max-incr: the same here (every server granted both holds, so their counters agree)",
    client: "lockserver: one server shows the same",
  },
  predict: (o) => staleUnlessFenced(o, "client 0's write"),
};

/** M2's kill of lockserver-3, and client 0's release. */
const M2_KILL_MS = 500;
const M2_RELEASE_MS = 2500;

/** Client 0 (worker-1) reaches lockserver-1..3 only, client 1 (worker-2) lockserver-3..5 only. */
const splitMajorities: ScriptStep = { atMs: 0, nemesis: "partition", fault: { targets: [...cutFrom(1, [4, 5]), ...cutFrom(2, [1, 2])], durationMs: null } };

export const M2: Scenario = {
  id: "M2",
  title: "a majority of lock servers: a server that granted the lock restarts without it",
  shows:
    "client 0 holds lockserver-1,2,3; lockserver-3 is killed and restarts without its journal; client 1 takes lockserver-3,4,5: two majorities at once, a mutex-violation (with the largest fence of each, both get fence 1)",
  options: {
    ...ONE_HOLD_EACH,
    ...MAJORITY,
    "fence-source": "max-incr",
    concurrency: 2,
    workers: 2,
    ttl: 3000,
    // Client 0 holds from 0 to about 2500 ms; lockserver-3 is back at about 800 ms
    // (under a loaded test suite, once at 1570 ms); client 1 asks at 2000 ms.
    work: M2_RELEASE_MS,
    stagger: 2000,
    "acquire-timeout": 4000,
    "time-limit": 3,
    "restart-delay": 300,
    "lockserver-persistence": "none",
    fence: false,
    // Cut links refuse connections: a server out of reach is a definite no at once.
    "partition-mode": "reset",
  },
  varies: {
    "lockserver-persistence": "always: lockserver-3 replays its journal and still holds the lock for client 0; client 1 waits for client 0's release: valid",
    "fence-source": "single: client 1 cannot reach lockserver-1 for its fence, so its acquire ends unknown and the overlap cannot be proved",
    fence: "on: the resource compares fences as well; both holds' fences are 1",
  },
  script: (o) => [splitMajorities, { atMs: M2_KILL_MS, nemesis: "kill", fault: { targets: ["lockserver-3"], durationMs: o["restart-delay"] as number } }],
  predict: (o): Prediction => {
    if (o["fence-source"] === "single") return { anomalies: null, why: "client 1 cannot reach lockserver-1, the single fence counter: its acquire ends unknown (info), so the overlap cannot be proved" };
    if (o["lockserver-persistence"] !== "none") return { anomalies: [], why: "lockserver-3 fsynced client 0's grant to its journal before it answered, so it comes back holding the lock for client 0" };
    const delay = o["restart-delay"] as number;
    if (M2_KILL_MS + delay > 1500 - 300) return { anomalies: null, why: "lockserver-3 comes back too close to client 1's acquire to call it" };
    return {
      anomalies: ["mutex-violation", "duplicate-fence"],
      why: "lockserver-3 came back empty and granted client 1 while client 0 held lockserver-1,2,3: two majorities at once; its counter started again, so both holds' largest fence is 1",
    };
  },
};

/** M3's and M4's holds start a second apart: client i at i s. */
const STAGGER_MS = 1000;

/** Four holds alternating between majorities {1,2,3} and {1,4,5}; then client 4 on {1,2,3}, frozen; client 5 slow to lockserver-1. */
const divergingCounters = (): ScriptStep[] => [
  // Holds 0-3: worker-1 (clients 0, 2, 4) reaches {1,2,3}, worker-2 (clients 1, 3, 5) {1,4,5}.
  { atMs: 0, nemesis: "partition", fault: { targets: [...cutFrom(1, [4, 5]), ...cutFrom(2, [2, 3])], durationMs: 3.4 * STAGGER_MS } },
  // Hold 4 (client 4, at 4 s) on {1,2,3} again; hold 5 (client 5, at 5 s) reaches every server, lockserver-1 400 ms late each way.
  { atMs: 3.6 * STAGGER_MS, nemesis: "partition", fault: { targets: cutFrom(1, [4, 5]), durationMs: null } },
  { atMs: 3.6 * STAGGER_MS, nemesis: "latency", fault: { targets: [link(2, "lockserver-1")], latencyMs: 400, jitterMs: 0, durationMs: null } },
];

const DIVERGING = {
  ...ONE_HOLD_EACH,
  ...MAJORITY,
  concurrency: 6,
  workers: 2,
  ttl: 1000,
  // Each hold about 100 ms, client i's at i s; client 4 stops 2.5 s after its grant (its lease is 1 s) and then writes.
  work: 100,
  stagger: STAGGER_MS,
  pause: 2500,
  "pause-clients": ["4"],
  "pause-at": "acquire",
  "acquire-timeout": 2000,
  "command-timeout": 2000,
  "time-limit": 6,
  fence: true,
  "partition-mode": "reset",
};

export const M3: Scenario = {
  id: "M3",
  title: "a majority of lock servers, fence = the largest of the majority's: fences fall, and a stale write lands with fencing on",
  shows:
    "four holds alternate between {1,2,3} and {1,4,5}: lockserver-1 counts 4 grants, the others 2; client 4 holds {1,2,3} with fence 5 and freezes past its lease; client 5, slow to lockserver-1, gets its majority from the other four with fence 4, hold 3's again: duplicate-fence and fence-regression; the resource refuses client 5's write and accepts client 4's late one, fence 5",
  options: { ...DIVERGING, "fence-source": "max-incr" },
  varies: {
    "fence-source": "single: scenario M4",
    fence: "off: the same fences; the resource takes every write",
  },
  script: divergingCounters,
  predict: () => ({
    anomalies: ["fence-regression", "duplicate-fence"],
    why: "client 5's majority left out lockserver-1, the only counter that had seen client 4's fence 5 and hold 3's 4: its largest is 4 again, so the resource refuses its write and takes client 4's stale one",
  }),
};

export const M4: Scenario = {
  id: "M4",
  title: "a majority of lock servers, fences from one counter: the stale write refused",
  shows:
    "M3's holds and faults with every fence taken from lockserver-1's counter: client 5's fence is above client 4's, so the resource refuses client 4's late write: valid with fencing, stale-write-accepted without",
  options: { ...DIVERGING, "fence-source": "single" },
  varies: {
    "fence-source": "max-incr: scenario M3",
    fence: "off: the resource takes client 4's late write after client 5's (stale-write-accepted)",
  },
  script: divergingCounters,
  predict: (o: ParsedOptions) => staleUnlessFenced(o, "client 4's late write", "client 5's fence came from the same counter, after client 4's"),
};
