// P1: session advisory locks behind pgbouncer in transaction pooling
// (docs/backends.md, Postgres). A session lock belongs to the server connection the
// statement ran on, and in transaction pooling that connection serves every
// client's next transaction: with one server connection in the pool, a second
// client's pg_advisory_lock runs on the session that already holds the lock,
// and advisory locks are re-entrant, so it is granted at once. Two clients hold
// the lock together, with no fault at all. The fences still come from one
// counter row, in grant order, so fencing keeps stale writes out; the lock
// itself is gone.
import { ONE_HOLD_EACH, type Scenario } from "../../core/scenario.ts";

export const P1: Scenario = {
  id: "P1",
  title: "a session advisory lock through pgbouncer in transaction pooling",
  shows: "client 1's pg_advisory_lock runs on the pooled server connection whose session already holds client 0's lock, and is granted at once (re-entrant): a mutex-violation, with no fault",
  options: {
    ...ONE_HOLD_EACH,
    backend: "postgres",
    client: "postgres-advisory",
    "pg-pooler": "pgbouncer",
    nemesis: ["none"],
    concurrency: 3,
    workers: 3,
    ttl: 3000,
    // Client 0 holds from about 0 to 1000 ms; client 1 asks at 400 ms, client 2 at 800 ms.
    work: 1000,
    stagger: 400,
    "acquire-timeout": 2000,
    "time-limit": 3,
  },
  varies: {
    "pg-pooler": "none: each client its own session, and a waiter waits: the run is valid",
    client: "postgres-lease: the lease lives in a row, not in a session, and pooling changes nothing: valid",
    fence: "off: fences do not enter into it; the lock service let clients hold the lock together",
  },
  predict: (o) => {
    if (o["pg-pooler"] !== "pgbouncer") return { anomalies: [], why: "each client has a session of its own: a second pg_advisory_lock waits for the first to be released" };
    if (o.client !== "postgres-advisory") return { anomalies: [], why: "a lease row is one statement per step, so any server connection serves it as well as another" };
    return { anomalies: ["mutex-violation"], why: "every client's pg_advisory_lock runs on the one pooled session, which already holds the lock: each is granted at once" };
  },
};
