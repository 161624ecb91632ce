// ZooKeeper's forms of the catalogue's failures. Z1 is K1 with a session in
// place of a lease: ZooKeeper frees a lock when the holder's session expires, and
// a session expires when the server hears nothing for its timeout, which is what a
// frozen process sends. The holder thaws with its write already due and sends it
// before it has read the news that its session is gone (the server's answer to its
// reconnect): only the fence can refuse that write. The history then shows when the
// client knew: its release answers `released: false, lost: "session-expired"`.
import type { ParsedOptions } from "../lib/index.ts";
import { ONE_HOLD_EACH, type Scenario } from "./scenario.ts";

export const Z1: Scenario = {
  id: "Z1",
  title: "ZooKeeper: a holder's session expires while it is frozen, then it writes",
  shows:
    "client 0 holds the lock with a 1 s session; its worker is SIGSTOPped from 200 ms to 2700 ms, so it sends no pings and ZooKeeper expires the session and deletes its lock node; client 1 gets the lock and writes; client 0 thaws with its write due and sends it before it learns its session is gone: accepted without fencing, refused with it",
  options: {
    ...ONE_HOLD_EACH,
    backend: "zookeeper",
    client: "zookeeper",
    concurrency: 2,
    workers: 2,
    ttl: 1000,
    // Client 0's write falls due about 2100 ms in (its grant, some 100 ms, plus
    // 2000), while its worker is stopped; client 1 asks from 300 ms and takes the
    // lock when the session expires (about 1.2-1.4 s).
    pause: 2000,
    "pause-clients": ["0"],
    "pause-at": "acquire",
    work: 0,
    stagger: 300,
    "acquire-timeout": 4000,
    "time-limit": 4,
    fence: false,
  },
  varies: {
    fence: "on: the resource refuses client 0's write with 409 and the run is valid",
    client: "zookeeper-naive: the same (it writes as soon as it thaws too); it never learns its hold is lost, and its release finds no node",
  },
  // The in-process --pause alone would not do: the client's pings go on while it
  // sleeps. The SIGSTOP freezes them, as a GC pause does.
  script: () => [{ atMs: 200, nemesis: "pause", fault: { targets: ["worker-1"], durationMs: 2500 } }],
  predict: (o: ParsedOptions) =>
    o.fence
      ? { anomalies: [], why: "the resource refuses client 0's write: its fence (its node's czxid) is lower than client 1's" }
      : { anomalies: ["stale-write-accepted"], why: "without fencing the resource takes client 0's write after client 1's: stale-write-accepted" },
};
