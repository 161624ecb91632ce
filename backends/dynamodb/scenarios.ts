// DynamoDB's forms of the catalogue's failures (docs/backends.md, dynamodb).
//
// D1 is K1 against AWS's lock client algorithm (dynamodb-rvn): a waiter never
// compares clocks, it takes the lock once the holder's record version number
// (rvn) has not changed for a whole lease. A holder frozen past that is not
// heartbeating, so the waiter is right to take over; the holder thaws with its
// write due and sends it. Only the fence can refuse it.
//
// D2 is the Go port's dynamolock #280 in npm's dynamodb-lock-client: a heartbeat
// that reached DynamoDB but timed out before its reply came. The item has a new
// rvn (the library calls it guid) that its holder never learnt; the library
// emits an 'error' on the lock and sends no more heartbeats, but never tells its
// user the lock is lost. A waiter sees the new rvn stay put for a lease and takes
// over; the first holder, still believing, writes late.
//
// D3 is a clock jump on a client: dynamodb-cas judges a lease by its caller's
// clock (leaseUntil < now), as a `trustLocalTime` client does. A waiter whose
// wall clock jumps forward sees a live lease as expired and takes the lock; the
// RVN algorithm measures its wait on the monotonic clock and does not care.
// The history's times come from the run's monotonic clock, so they do not jump.
import type { ParsedOptions } from "../../lib/index.ts";
import { ONE_HOLD_EACH, link, staleUnlessFenced, type Scenario } from "../../core/scenario.ts";

export const D1: Scenario = {
  id: "D1",
  title: "DynamoDB (AWS's lock client algorithm): a holder frozen past its lease, then it writes",
  shows:
    "client 0 holds a 1 s lease and heartbeats a new rvn every 333 ms; its worker is SIGSTOPped from 800 ms to 3800 ms; client 1 asks from 1000 ms, sees the same rvn for a whole lease and takes the lock over; client 0 thaws with its write due; its overdue heartbeat cannot be answered (its link to DynamoDB stays cut until 5000 ms) and ends unknown, and the write goes then: accepted without fencing, refused with it",
  options: {
    ...ONE_HOLD_EACH,
    backend: "dynamodb",
    client: "dynamodb-rvn",
    renew: true,
    concurrency: 2,
    workers: 2,
    ttl: 1000,
    // Client 0's write falls due 2500 ms after its grant (which comes well before the freeze, even on a busy machine), while its worker is stopped.
    pause: 2500,
    "pause-clients": ["0"],
    "pause-at": "acquire",
    work: 0,
    stagger: 1000,
    "acquire-timeout": 4000,
    // The write goes once the overdue heartbeat ends unknown at the heal, 5 s in;
    // on a loaded machine every moment slips, and a run ending at 6 s once ended before it.
    "time-limit": 9,
    fence: false,
  },
  varies: {
    fence: "on: the resource refuses client 0's write (its fence is lower than client 1's) and the run is valid",
    client: "dynamodb-cas or dynamodb-lock-client: the same (a frozen holder's lease ends by any algorithm)",
  },
  // The in-process --pause alone would not do: the heartbeats go on while the
  // workload sleeps. The SIGSTOP freezes them, as a GC pause does.
  // At the thaw a heartbeat is overdue as well as the write, and fires first; its
  // answer (not-owner: the rvn changed) ends the hold, and it came before the
  // write in a loaded test run. Client 0's link to DynamoDB is cut from before the
  // thaw until 1200 ms after it (a network as slow to recover as the process), so
  // the heartbeat cannot be answered: it ends unknown when the cut heals and the
  // write goes then. The pause starts when its signal is sent, which slips on a
  // loaded machine while the cut's moment does not: 400 ms of margin once let the
  // thaw fall after the heal.
  script: () => [
    { atMs: 800, nemesis: "pause", fault: { targets: ["worker-1"], durationMs: 3000 } },
    { atMs: 3000, nemesis: "partition", fault: { targets: [link(1, "dynamodb-1")], durationMs: 2000 } },
  ],
  predict: (o) => staleUnlessFenced(o, "client 0's write", "its fence is lower than the one client 1's takeover added"),
};

/** D2's moments: client 0's link to DynamoDB is slowed from D2_SLOW for D2_SLOW_MS, each way by D2_LATENCY, which is more than half the command timeout. */
const D2_SLOW = 600;
const D2_SLOW_MS = 1500;
const D2_LATENCY = 500;

export const D2: Scenario = {
  id: "D2",
  title: "DynamoDB: a heartbeat that timed out but succeeded (dynamolock #280)",
  shows:
    "client 0 holds a 1.5 s lease with npm's dynamodb-lock-client, which heartbeats a new rvn every 500 ms; from 600 ms its link to DynamoDB takes 500 ms each way, so a heartbeat reaches DynamoDB and writes its rvn after 500 ms but times out at 800 ms; the library stops heartbeating and never tells its user (a suspended notice, no lost one); client 1 sees the new rvn stay put for a lease and takes the lock over and writes; client 0, done with its 4.5 s of work, writes: accepted without fencing, refused with it",
  options: {
    ...ONE_HOLD_EACH,
    backend: "dynamodb",
    client: "dynamodb-lock-client",
    // The library heartbeats by itself; dynamodb-rvn (varies) heartbeats through the renew watchdog.
    renew: true,
    concurrency: 2,
    workers: 2,
    ttl: 1500,
    // Client 0 writes 4.5 s after its grant (working, heartbeating meanwhile); client 1 writes as soon as it is granted.
    pause: 4500,
    "pause-clients": ["0"],
    "pause-at": "acquire",
    work: 0,
    stagger: 300,
    "acquire-timeout": 5000,
    // A heartbeat's round trip (1000 ms) outlasts it: the request was applied, the client cannot know.
    "command-timeout": 800,
    "time-limit": 7,
    fence: false,
  },
  varies: {
    client: "dynamodb-rvn: its heartbeat goes through the renew watchdog, whose timeout is recorded (info) and ends the hold's use before it writes (and the client keeps its old rvn, so any later heartbeat would fail its condition): the run is valid",
    fence: "on: the resource refuses client 0's write (fence 1, below client 1's) and the run is valid; the lock was still lost without a word",
  },
  // Only client 0's link to DynamoDB: its write to the resource stays fast.
  script: () => [{ atMs: D2_SLOW, nemesis: "latency", fault: { targets: [link(1, "dynamodb-1")], latencyMs: D2_LATENCY, jitterMs: 0, durationMs: D2_SLOW_MS } }],
  predict: (o: ParsedOptions) => {
    if (o.client !== "dynamodb-lock-client")
      return { anomalies: [], why: "client 0's heartbeat is its renew, whose timeout the workload hears: it stops using the lock before it writes" };
    return o.fence
      ? { anomalies: [], why: "the resource refuses client 0's write: its fence is below client 1's (the library never told client 0 its lock was gone)" }
      : { anomalies: ["stale-write-accepted"], why: "the library stops heartbeating without telling its user: client 0 writes after client 1 took the lock over and wrote, and the resource takes it" };
  },
};

/** D3: client 1's worker clock jumps this far forward, at this moment. */
const D3_JUMP_AT = 1000;
const D3_JUMP_MS = 30_000;

export const D3: Scenario = {
  id: "D3",
  title: "DynamoDB: a waiter's clock jumps forward and a lease judged by the caller's clock is taken",
  shows:
    "client 0 holds a 2 s lease with dynamodb-cas and renews it every 666 ms (leaseUntil by its own clock); client 1 waits from 300 ms; at 1000 ms client 1's worker's wall clock jumps 30 s forward, so its conditional write finds leaseUntil < now and takes the lock client 0 still holds: mutex-violation. The history's times, from the monotonic clock, do not jump",
  options: {
    ...ONE_HOLD_EACH,
    backend: "dynamodb",
    client: "dynamodb-cas",
    renew: true,
    concurrency: 2,
    workers: 2,
    ttl: 2000,
    // Client 0 holds from its grant to 3 s after it.
    work: 3000,
    stagger: 300,
    "acquire-timeout": 5000,
    "clock-target": "clients",
    "time-limit": 5,
    fence: true,
  },
  varies: {
    client: "dynamodb-rvn: a waiter measures a lease on its monotonic clock and takes over only after a whole lease without heartbeats; the jump changes nothing and the run is valid",
    fence: "off: the same (the lock, not the resource, is at fault)",
  },
  script: () => [{ atMs: D3_JUMP_AT, nemesis: "clock", fault: { targets: ["worker-2"], mode: "bump", offsetMs: D3_JUMP_MS, durationMs: 2000 } }],
  predict: (o: ParsedOptions) =>
    o.client === "dynamodb-cas"
      ? { anomalies: ["mutex-violation"], why: "client 1 judges client 0's live lease by a clock 30 s ahead, finds it expired, and is granted the lock: two holders" }
      : { anomalies: [], why: "the RVN algorithm compares no clocks: client 1 waits for a lease without heartbeats, which never comes while client 0 renews" },
};
