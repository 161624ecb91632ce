// ZooKeeper's forms of the catalogue's failures. Z1 is K1 with a session in
// place of a lease: ZooKeeper frees a lock when the holder's session expires, and
// a session expires when the server hears nothing for its timeout, which is what a
// frozen process sends. The holder thaws with its write already due and sends it
// before it has read the news that its session is gone (the server's answer to its
// reconnect): only the fence can refuse that write. The history then shows when the
// client knew: its release answers `released: false, lost: "session-expired"`.
//
// Z2 is ZOOKEEPER-1262: a create that succeeds on the server while its reply is
// lost. Client 1's links are slowed so that its create is in the network's hands
// long enough, then cut (closed) after the server made the node and before the
// reply came back. With protection mode the client looks among the children for
// its session's prefix, finds the node and holds the lock; without, it sends the
// create again and queues behind its own first node, which holds the lock for
// nobody until the session ends (orphan-lock-node).
import type { ParsedOptions } from "../../lib/index.ts";
import { ONE_HOLD_EACH, cut, staleUnlessFenced, type Scenario } from "../../core/scenario.ts";

const MEMBERS = ["zk-1", "zk-2", "zk-3"];

export const Z1: Scenario = {
  id: "Z1",
  title: "ZooKeeper: a holder's session expires while it is frozen, then it writes",
  shows:
    "client 0 holds the lock with a 1 s session; its worker is SIGSTOPped from 1000 ms to 5000 ms, so it sends no pings and ZooKeeper expires the session and deletes its lock node; client 1 gets the lock and writes; client 0 thaws with its write due and sends it before it learns its session is gone (its links to ZooKeeper stay cut until 6200 ms): accepted without fencing, refused with it",
  options: {
    ...ONE_HOLD_EACH,
    backend: "zookeeper",
    client: "zookeeper",
    concurrency: 2,
    workers: 2,
    ttl: 1000,
    // Client 0's write falls due 2000 ms after its grant (which comes within the
    // first second, its session's connect included, even on a busy machine: at
    // 200 ms it once had not come yet, and client 1 took the lock first), while its
    // worker is stopped; client 1 asks from 1200 ms and takes the lock when the
    // session expires, a little more than a second after the freeze.
    pause: 2000,
    "pause-clients": ["0"],
    "pause-at": "acquire",
    work: 0,
    stagger: 1200,
    "acquire-timeout": 5000,
    // The release hears of the expiry at the heal, 6.2 s in; a loaded machine's slips need the margin.
    "time-limit": 9,
    fence: false,
  },
  varies: {
    fence: "on: the resource refuses client 0's write with 409 and the run is valid",
    client: "zookeeper-naive: the same (it writes as soon as it thaws too); it never learns its hold is lost, and its release finds no node",
  },
  // The in-process --pause alone would not do: the client's pings go on while it
  // sleeps. The SIGSTOP freezes them, as a GC pause does.
  // Thawed well after the write fell due, even on a busy machine where the grant takes a while.
  // At the thaw the package reconnects and hears that the session expired a few
  // turns of the event loop later, about as soon as the overdue write is sent: a
  // race the write lost once in a loaded test run. Client 0's links to ZooKeeper
  // are cut from before the thaw until 1200 ms after it (a network as slow to
  // recover as the process), so the news comes after the write, every time; its
  // release, waiting for the session to settle, then hears it. The pause starts
  // when its signal is sent, which slips on a loaded machine while the cut's
  // moment does not: 400 ms of margin could let the thaw fall after the heal.
  script: () => [
    { atMs: 1000, nemesis: "pause", fault: { targets: ["worker-1"], durationMs: 4000 } },
    { atMs: 4000, nemesis: "partition", fault: { targets: cut(1, MEMBERS), durationMs: 2200 } },
  ],
  predict: (o) => staleUnlessFenced(o, "client 0's write", "its fence, its node's czxid, is lower than client 1's"),
};

/** Z2's moments: client 1 starts at Z2_START; each way on its links takes Z2_LATENCY. */
const Z2_START = 2500;
const Z2_LATENCY = 600;

export const Z2: Scenario = {
  id: "Z2",
  title: "ZooKeeper: a create succeeds but its reply is lost (ZOOKEEPER-1262)",
  shows:
    "client 1's links are slowed 600 ms each way; its create reaches the server and makes the node, and the links are cut before the reply comes back; the session survives the cut. With protection mode (--client zookeeper) it finds its node again and holds the lock; zookeeper-naive sends the create again and waits behind its own first node, which holds the lock for nobody: orphan-lock-node",
  options: {
    ...ONE_HOLD_EACH,
    backend: "zookeeper",
    client: "zookeeper-naive",
    concurrency: 2,
    workers: 2,
    // The session: long enough to outlive the slow links and the cut, and to let a
    // connect (one slow round trip) finish within a third of it.
    ttl: 4500,
    work: 100,
    // Client 0 (fast) makes the key's node and holds briefly at 0 ms; client 1 starts at 2.5 s.
    stagger: Z2_START,
    "acquire-timeout": 6000,
    "time-limit": 9,
    // The cut drops what passes (timeout mode), the reply among it, as the
    // latency lets it go; the connection then carries replies the client cannot
    // match, and it reconnects on the same session.
    "partition-mode": "timeout",
    fence: true,
  },
  varies: {
    client: "zookeeper: protection mode finds the node the lost reply named, client 1 holds the lock, and the run is valid",
    fence: "off: the same (the lock, not the resource, is at fault)",
  },
  script: () => {
    // Client 1 connects (a slow round trip, two legs), looks for the key's node
    // (two) and creates its own: the create reaches the server five legs after
    // client 1 starts, its reply would be back after six. The cut falls between,
    // and the latency outlasts it (removed before, it would hand on the reply it holds).
    const cutAt = Z2_START + 5.5 * Z2_LATENCY;
    return [
      { atMs: 0, nemesis: "latency", fault: { targets: cut(2, MEMBERS), latencyMs: Z2_LATENCY, jitterMs: 0, durationMs: cutAt + 1500 } },
      { atMs: cutAt, nemesis: "partition", fault: { targets: cut(2, MEMBERS), durationMs: 500 } },
    ];
  },
  predict: (o: ParsedOptions) =>
    o.client === "zookeeper-naive"
      ? { anomalies: ["orphan-lock-node"], why: "client 1 sends the create again and its acquire fails behind the node its lost reply named, which holds the lock for nobody" }
      : { anomalies: [], why: "client 1 finds its node by its session's prefix and holds the lock: valid" },
};

/** Z3's moments: when client 1's links to every member start dropping, and for how long. */
const Z3_CUT_AT = 1300;
const Z3_CUT_MS = 2700;

export const Z3: Scenario = {
  id: "Z3",
  title: "ZooKeeper: a waiter gives up while cut off, and its node stays (kazoo #760)",
  shows:
    "client 0 holds the lock for 4 s; client 1 waits from 500 ms and gives up at 1500 ms, while its links drop every packet (1300 ms to 4000 ms); kazoo's delete of its waiting node is lost, kazoo swallows the error, the 4 s session survives the cut, and the node is left queued under it: after client 0 releases it holds the lock for nobody, and client 1's next acquire waits behind its own node: orphan-lock-node",
  options: {
    ...ONE_HOLD_EACH,
    backend: "zookeeper",
    client: "kazoo",
    concurrency: 2,
    workers: 2,
    // The session outlives the cut, so nothing ends the node's life.
    ttl: 4000,
    // With seed 1, client 1's second attempt falls at about 5 s, after the cut and client 0's release;
    // client 0's second falls after the run.
    rate: 0.122,
    work: 4000,
    stagger: 500,
    "acquire-timeout": 1000,
    "time-limit": 7,
    // Dropped, not refused: the delete is taken by the proxy and never arrives.
    "partition-mode": "timeout",
    fence: true,
  },
  varies: {
    client: "curator: its guaranteed delete is sent again once it has reconnected, and the run is valid; zookeeper: a withdrawal that goes unanswered ends the session, whose nodes go with it: valid",
    fence: "off: the same (the lock, not the resource, is at fault)",
  },
  script: () => [{ atMs: Z3_CUT_AT, nemesis: "partition", fault: { targets: cut(2, MEMBERS), durationMs: Z3_CUT_MS } }],
  predict: (o: ParsedOptions) =>
    o.client === "kazoo"
      ? { anomalies: ["orphan-lock-node"], why: "client 1's next acquire fails behind the node its lost delete left under its own session, which holds the lock for nobody" }
      : { anomalies: [], why: "client 1's withdrawn node is gone before anyone waits behind it: valid" },
};
