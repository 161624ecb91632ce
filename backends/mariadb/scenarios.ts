// MariaDB's named locks (GET_LOCK) in the failure catalogue (docs/backends.md,
// MariaDB): the three ways the lock leaves a holder that still believes it
// holds. A named lock lives as long as its session, and nothing else ends it.
//
// N1: the holder's link is reset (a proxy or load balancer that drops its
// connections): the server sees the session's connection close, ends the
// session, and grants the lock to the next waiter at once, well inside the
// holder's TTL. GET_LOCK gives its holder no notice; it learns only at its next
// statement. Two holders: mutex-violation, and the old holder's write lands
// after the new one's unless fenced. A silent link (--partition-mode timeout)
// does the same at its heal, when the fault proxy closes the connections whose
// data it dropped (as Toxiproxy does): only a link that stays silent past
// wait_timeout lets the server end the session by idleness instead (N2's way).
//
// N2: the holder frozen past wait_timeout (mariadb-get-lock sets it to --ttl in
// whole seconds): the server ends the idle session and frees the lock; the
// holder thaws with its write due and sends it. wait_timeout counts from the
// session's last statement, which came after the acquire was asked for, so the
// lock lasts at least the TTL: a lease, whose late holder's write only the
// fence keeps out (stale-write-accepted), not two holders the checker can
// prove. With the server's default wait_timeout (8 hours) a frozen holder keeps
// its lock, and every waiter waits.
//
// N3: GET_LOCK through a connection pool shared by one program's callers: the
// lock belongs to the pooled connection, which the pool hands to the next
// caller, whose GET_LOCK of the same name is granted at once (re-entrant). Two
// holders with no fault at all, as P1's pgbouncer does to Postgres.
import type { ParsedOptions } from "../../lib/index.ts";
import { ONE_HOLD_EACH, link, staleUnlessFenced, type Prediction, type Scenario } from "../../core/scenario.ts";

export const N1: Scenario = {
  id: "N1",
  title: "MariaDB GET_LOCK: the holder's link is reset, and the server frees its lock at once",
  shows:
    "client 0 holds with a 3 s TTL (wait_timeout 3 s) and writes 2 s after its grant; client 1 waits from 1 s; at 1.5 s client 0's link to mariadb-1 is reset (--partition-mode reset): the server ends the session and grants client 1 within milliseconds, while client 0's TTL runs; client 0, told nothing, writes at 2 s after client 1: mutex-violation, and its write accepted unless fenced",
  options: {
    ...ONE_HOLD_EACH,
    backend: "mariadb",
    client: "mariadb-get-lock",
    "partition-mode": "reset",
    concurrency: 2,
    workers: 2,
    ttl: 3000,
    // Client 0 writes 2 s after its grant; client 1 as soon as it is granted.
    pause: 2000,
    "pause-clients": ["0"],
    "pause-at": "acquire",
    work: 0,
    // Client 1 asks a second after client 0, which a busy machine may take to connect and be granted first.
    stagger: 1000,
    "acquire-timeout": 4000,
    "time-limit": 3,
    fence: false,
  },
  varies: {
    fence: "on: the resource refuses client 0's write (its fence is below client 1's); the lock still had two holders (mutex-violation)",
    "partition-mode": "timeout: the link goes silent and the server keeps the session until the heal at 1.5 s, when the proxy closes the connections that lost data (as Toxiproxy does): the server ends the session then, and the run finds the same",
    client: "mariadb-lease: the lease lives in a row, not in a session, and client 1 waits for client 0's release: valid",
  },
  // Only client 0's link to the server: its write to the resource goes through.
  script: () => [{ atMs: 1500, nemesis: "partition", fault: { targets: [link(1, "mariadb-1")], durationMs: 1000 } }],
  predict: (o: ParsedOptions): Prediction => {
    if (o.client !== "mariadb-get-lock") return { anomalies: [], why: "a lease row is freed by time alone: client 1 waits for client 0's release" };
    return o.fence
      ? { anomalies: ["mutex-violation"], why: "the server freed the lock when the reset closed client 0's session, and granted client 1 while client 0's TTL ran; the resource refuses client 0's write" }
      : { anomalies: ["mutex-violation", "stale-write-accepted"], why: "the server freed the lock when the reset closed client 0's session, and granted client 1 while client 0's TTL ran; client 0's write lands after client 1's" };
  },
};

/** N2's moments: client 0's worker is frozen from FREEZE_AT for FREEZE_MS; its write falls due meanwhile. */
const FREEZE_AT = 700;
const FREEZE_MS = 2400;

export const N2: Scenario = {
  id: "N2",
  title: "MariaDB GET_LOCK: a holder frozen past wait_timeout loses its session, then writes",
  shows:
    "client 0 holds with a 1 s TTL (wait_timeout 1 s); its worker is SIGSTOPped from 700 ms to 3100 ms with its write due at 2000 ms; the server ends the idle session 1 s after its last statement and grants client 1, waiting since 600 ms, which writes; client 0 thaws and writes after it: accepted without fencing, refused with it",
  options: {
    ...ONE_HOLD_EACH,
    backend: "mariadb",
    client: "mariadb-get-lock",
    concurrency: 2,
    workers: 2,
    ttl: 1000,
    pause: 2000,
    "pause-clients": ["0"],
    "pause-at": "acquire",
    work: 0,
    // Client 1 asks once client 0 has surely been granted, even on a busy machine.
    stagger: 600,
    "acquire-timeout": 4000,
    "time-limit": 4,
    fence: false,
  },
  varies: {
    fence: "on: the resource refuses client 0's write (its fence is below client 1's) and the run is valid",
    ttl: "4000: wait_timeout 4 s outlasts the freeze; client 0 writes and releases before the server would end its session, and client 1 is granted then: valid",
  },
  // A SIGSTOP, as a GC pause: the in-process --pause alone would keep the write due, the freeze keeps the whole worker silent.
  script: () => [{ atMs: FREEZE_AT, nemesis: "pause", fault: { targets: ["worker-1"], durationMs: FREEZE_MS } }],
  predict: (o: ParsedOptions) => {
    // The session is ended wait_timeout after its last statement, the grant's, a few ms after the start.
    if (Math.max(1, Math.ceil((o.ttl as number) / 1000)) * 1000 > FREEZE_AT + FREEZE_MS)
      return { anomalies: [], why: "wait_timeout outlasts the freeze: client 0 writes and releases while its session lives" };
    return staleUnlessFenced(o, "client 0's write", "its fence is lower than the one granted to client 1 when the server ended client 0's session");
  },
};

export const N3: Scenario = {
  id: "N3",
  title: "MariaDB GET_LOCK through a connection pool shared by one program's clients",
  shows:
    "three clients of one worker share mysql2's pool (--connections per-worker); client 0's GET_LOCK runs on a pooled connection that goes back to the pool still holding the lock; clients 1 and 2 are handed that connection and their GET_LOCK is granted at once (re-entrant): a mutex-violation, with no fault",
  options: {
    ...ONE_HOLD_EACH,
    backend: "mariadb",
    client: "mariadb-get-lock-pool",
    connections: "per-worker",
    nemesis: ["none"],
    concurrency: 3,
    workers: 1,
    ttl: 3000,
    // Client 0 holds from about 0 to 1000 ms; client 1 asks at 400 ms, client 2 at 800 ms.
    work: 1000,
    stagger: 400,
    "acquire-timeout": 2000,
    "time-limit": 3,
  },
  varies: {
    connections: "per-client: each client a pool of its own (its own program), and a waiter waits: valid",
    client: "mariadb-get-lock: each client a session of its own, and a waiter waits: valid",
    fence: "off: fences do not enter into it; the lock let clients hold it together",
  },
  predict: (o: ParsedOptions) => {
    if (o.client !== "mariadb-get-lock-pool") return { anomalies: [], why: "each client asks on a session of its own: a second GET_LOCK waits for the first to be released" };
    if (o.connections !== "per-worker") return { anomalies: [], why: "each client has a pool of its own, so no other client is handed its connection" };
    return { anomalies: ["mutex-violation"], why: "the pool hands client 0's connection, lock and all, to clients 1 and 2, whose GET_LOCK is granted at once" };
  },
};
