// C1: a read-modify-write under a lease, with only the writes fenced. A holder
// reads, outlives its lease, and writes read+1 before the next holder (who read
// the same value) writes: both increments land as one. Its fence is still the
// highest the resource has seen, so write-only fencing cannot refuse it; a read
// that advances the resource's fence can (--fence-reads).
import { ONE_HOLD_EACH, type Scenario } from "../core/scenario.ts";

export const C1: Scenario = {
  id: "C1",
  title: "a counter's read-modify-write with only the writes fenced",
  shows:
    "client 0 reads 0 and stops for 5 s holding a 2 s lease; client 1 takes the lock, reads 0 and stops too; client 0 wakes and writes 1 (fence 1, still the highest), then client 1 writes 1 (fence 2): an increment lost despite fencing; --fence-reads refuses client 0's write",
  options: {
    ...ONE_HOLD_EACH,
    backend: "redis",
    workload: "counter",
    concurrency: 2,
    workers: 2,
    ttl: 2000,
    // Every holder pauses between its read and its write. Client 0 reads at ~0 s
    // and writes at ~5 s; client 1 (waiting since 0.3 s) gets the lock at ~2 s,
    // reads 0 and writes at ~7 s. The margins are seconds.
    pause: 5000,
    "pause-at": "read",
    work: 0,
    stagger: 300,
    "acquire-timeout": 3000,
    rate: 0.2,
    "time-limit": 1,
    fence: true,
  },
  varies: {
    "fence-reads": "reads carry the fence and advance the resource's: client 1's read moves it to 2, client 0's late write is refused and the run is valid",
    client: "any Redis client",
  },
  predict: (o) =>
    o["fence-reads"]
      ? { anomalies: [], why: "client 1's fenced read raised the resource's fence to 2, so client 0's write with fence 1 is refused: one increment, counted once" }
      : { anomalies: ["lost-update"], why: "client 0's write with fence 1 is the highest fence yet when it lands, so fencing passes it; client 1 then writes the same value: lost-update" },
};
