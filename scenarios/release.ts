// T1: the release that reads, compares in the client, then deletes. Between its
// GET and its DEL the lease can expire and another client take the lock; the DEL
// then deletes that client's lock, and a third client acquires while the second
// still holds it. Compare-and-delete in one Lua script closes it.
import { ONE_HOLD_EACH, type Scenario } from "../core/scenario.ts";

/** Client 0's GET at about 1500 ms; its lease ends at 2000 ms. */
const WORK_MS = 1500;
const TTL_MS = 2000;

export const T1: Scenario = {
  id: "T1",
  title: "release as GET then DEL deletes the next holder's lock",
  shows: "client 0's release reads its own owner, waits 0.9 s, and deletes: by then its lease ended and client 1 holds the lock, so client 2 acquires too: a mutex-violation",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redis",
    client: "redis-unsafe-release",
    concurrency: 3,
    workers: 3,
    ttl: TTL_MS,
    // Client 0: holds from 0 ms, GET at about 1500 ms, DEL at about 2400 ms.
    // Client 1: waits from 1400 ms, takes the lock when client 0's lease ends (2000 ms),
    // and is certainly valid until 3400 ms (its acquire invoke + TTL).
    // Client 2: starts at 2800 ms and finds the lock free.
    work: WORK_MS,
    "release-gap": 900,
    stagger: 1400,
    "acquire-timeout": 3000,
    "time-limit": 3,
  },
  varies: {
    client: "redis: compare-and-delete in one Lua script deletes nothing that is not its own; the run is valid",
    "release-gap": "300 or less: the DEL lands inside client 0's own lease and deletes only its own lock",
    fence: "off: fences do not enter into it; the lock service itself let two clients hold the lock",
  },
  // The gap means nothing to a client that releases in one step (and buildTest refuses it there).
  fit: (o) => {
    if (o.client !== "redis-unsafe-release") delete o["release-gap"];
  },
  predict: (o) => {
    if (o.client !== "redis-unsafe-release") return { anomalies: [], why: "the release compares and deletes in one script: it never deletes another client's lock" };
    const del = WORK_MS + ((o["release-gap"] as number | undefined) ?? 0);
    if (del <= TTL_MS - 200) return { anomalies: [], why: "the DEL lands while client 0's lease still runs: it deletes client 0's own lock" };
    if (del < TTL_MS + 300 || del > 2 * 1400 + 300) return { anomalies: null, why: "the DEL lands too close to the lease's end or to client 2's start to call it" };
    return { anomalies: ["mutex-violation"], why: "client 0's late DEL deleted client 1's lock, and client 2 acquired while client 1's lease still ran" };
  },
};
