// Waiters that give up (issue 29): a withdrawal that did not take leaves the
// waiter's queue entry behind, and the queue serves it to nobody.
//
// G1: a ZooKeeper waiter that says "cancelled" without deleting its node or
// looking whether its turn had come (zookeeper-cancel-naive, kept on purpose). Its
// node stays queued under its live session, takes the lock for nobody when the
// holder's node goes, and the next waiter waits behind it: grant-after-cancel.
//
// Q1: an etcd waiter whose withdrawal (a delete of its key) is lost in a
// partition. Its key stays queued, first once the holder releases, and the next
// waiter waits behind it until its lease expires. The lease is the acquire's own,
// kept alive only while the acquire runs and refused by the cut, so the stall
// lasts at most one TTL after its last keep-alive: below the stuck-lock threshold
// (TTL plus command timeout), valid even with --liveness strict.
import { ONE_HOLD_EACH, cut, otherSeed, type Scenario } from "../core/scenario.ts";

export const G1: Scenario = {
  id: "G1",
  title: "a waiter cancelled while its grant was on its way",
  shows:
    "ZooKeeper: client 0 holds the lock from about 0 s to 3 s or later; client 1 queues behind it from 1.3 s and is cancelled at about 2.25 s, shortly before its turn; zookeeper-cancel-naive answers \"cancelled\" without deleting its node, which stays queued under its live session and takes the lock for nobody when client 0 releases; client 2, invoked at 2.6 s, after the cancel was answered, waits behind client 1's node until its timeout: grant-after-cancel",
  options: {
    ...ONE_HOLD_EACH,
    backend: "zookeeper",
    client: "zookeeper-cancel-naive",
    concurrency: 3,
    // One process: client 1's session lives as long as the others' do (a worker
    // whose clients are all done closes their sessions, and ZooKeeper deletes their nodes).
    workers: 1,
    // A session that outlives the run's waits: nothing but client 1's own delete would end its node.
    ttl: 4000,
    // Seed 1's draws: client 1 alone is cancelled (its draw 0.42 below the rate, clients 0 and 2 above it),
    // 0.317 of its acquire timeout (951 ms) after it asks.
    "cancel-rate": 0.5,
    "acquire-timeout": 3000,
    // Client 0 releases at its grant plus 3 s: at least 750 ms after client 1's cancel.
    work: 3000,
    stagger: 1300,
    "time-limit": 3,
    fence: true,
  },
  varies: {
    client: "zookeeper: the cancelled waiter deletes its node and says \"cancelled\" once ZooKeeper confirms; client 2 waits behind client 0 alone and takes the lock when it releases: valid",
    fence: "off: the same (the lock, not the resource, is at fault)",
  },
  predict: (o) =>
    otherSeed(o, 1) ??
    (o.client === "zookeeper-cancel-naive"
      ? { anomalies: ["grant-after-cancel"], why: "client 1's acquire failed \"cancelled\", yet client 2, invoked after that answer, waited behind client 1's node" }
      : { anomalies: [], why: "client 1's node is deleted before its cancel is answered; client 2 waits behind client 0 alone" }),
};

/** Q1's moments: client 1's links to every member are cut from Q1_CUT_AT for Q1_CUT_MS. */
const Q1_CUT_AT = 1000;
const Q1_CUT_MS = 3500;
const MEMBERS = ["etcd-1", "etcd-2", "etcd-3"];

export const Q1: Scenario = {
  id: "Q1",
  title: "a cancelled etcd waiter whose key delete is lost",
  shows:
    "etcd queue, 3 s leases: client 0 holds from about 0.2 s to 1.45 s; client 1 queues behind it at 300 ms, client 2 behind client 1 at 600 ms; client 1's links are cut from 1 s to 4.5 s, and it is cancelled at about 1.9 s: its delete gets no answer (cancel-unknown), and its key, its lease last kept alive before the cut, stays at the head of the queue after client 0 releases; client 2 waits behind it (`behind` c1-h1) until the lease expires about 2 s later. The stall is bounded by the dead waiter's lease, below the stuck-lock threshold (TTL + command timeout, 4 s): valid, even with --liveness strict",
  options: {
    ...ONE_HOLD_EACH,
    backend: "etcd",
    client: "etcd-queue-cancel-delete",
    concurrency: 3,
    workers: 3,
    // Keep-alives every second while waiting; a waiter re-reads the queue every 3 s.
    ttl: 3000,
    // Client 1's read and then its delete each wait this long for an answer, inside the cut.
    "command-timeout": 1000,
    // Seed 1's draws: client 1 alone is cancelled (its draw 0.42 below the rate, clients 0 and 2 above it),
    // 0.317 of its acquire timeout (1585 ms) after it asks.
    "cancel-rate": 0.5,
    "acquire-timeout": 5000,
    work: 1200,
    stagger: 300,
    "time-limit": 5,
    "partition-mode": "timeout",
    // A stall longer than the threshold would be counted.
    liveness: "strict",
    fence: true,
  },
  varies: {
    client: "etcd-queue: its withdrawal is a revoke of the lease, lost the same way; the same stall, bounded by the lease: valid",
    fence: "off: the same",
  },
  script: () => [{ atMs: Q1_CUT_AT, nemesis: "partition", fault: { targets: cut(2, MEMBERS), durationMs: Q1_CUT_MS } }],
  predict: (o) =>
    otherSeed(o, 1) ?? {
      anomalies: [],
      why: "the dead waiter's key holds up client 2 only until its lease expires, at most one TTL after its last keep-alive, which came before the cut: the stall stays below the TTL plus the command timeout, so even --liveness strict finds no stuck lock",
    },
};

export const Q2: Scenario = {
  id: "Q2",
  title: "a withdrawn waiter's node left under a live session stalls the queue",
  shows:
    "ZooKeeper: client 0 holds the lock from about 0 s to 5 s; client 1 queues behind it from 1.3 s and is cancelled at about 4.15 s; zookeeper-cancel-naive answers \"cancelled\" without deleting its node, and its session, kept alive by the client's pings, keeps the node queued; when client 0 releases, the lock passes to that node and so to nobody, and client 2, queued behind it since 2.6 s, waits until its timeout at 11.6 s: the lock free and granted to nobody for 6.6 s, longer than the TTL plus the command timeout (5 s): stuck-lock, naming c1-h1 (counted: --liveness strict). Unlike Q1's etcd lease, a ZooKeeper session does not end while its client lives",
  options: {
    ...G1.options,
    // The stall to beat is the TTL plus this: 5 s.
    "command-timeout": 1000,
    // Seed 1's draws as G1's: client 1 alone is cancelled, 0.317 of its acquire timeout (2.85 s) after it asks, before client 0 releases.
    "acquire-timeout": 9000,
    work: 5000,
    liveness: "strict",
  },
  varies: {
    client: "zookeeper: the cancelled waiter deletes its node before its cancel is answered; client 2 takes the lock when client 0 releases: valid",
    fence: "off: the same",
  },
  predict: (o) =>
    otherSeed(o, 1) ??
    (o.client === "zookeeper-cancel-naive"
      ? { anomalies: ["stuck-lock"], why: "client 1's node stays queued under its live session after its cancel was answered, so after client 0's release nobody holds the lock and nobody is granted it while client 2 waits behind c1-h1, longer than the TTL plus the command timeout" }
      : { anomalies: [], why: "client 1's node is deleted before its cancel is answered; client 2 takes the lock when client 0 releases" }),
};
