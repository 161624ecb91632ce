// K1 and K2: a holder outlives its lease without knowing it, through no fault of
// the lock service: frozen (K1) or slowed on the way to the resource (K2). Its
// late write lands after the next holder's. Only the resource's fence check can
// refuse it; that is what fencing tokens are for, on every lease lock.
import { FROZEN_PAST_LEASE, ONE_HOLD_EACH, link, staleUnlessFenced, type Scenario } from "../core/scenario.ts";

const LEASE_VARIES = {
  fence: "on: the resource refuses the late write with 409 and the run is valid",
  backend: "any lease lock shows it (redlock, etcd), as the catalogue says",
  client: "any client of the backend",
  "fence-source": "--backend redlock: where the fence comes from",
};

/** Client 0 and the next holder, client 1, each in a worker of its own, on a 1 s lease. */
const TWO_CLIENTS_1S_LEASE = { ...ONE_HOLD_EACH, backend: "redis", concurrency: 2, workers: 2, ttl: 1000 };

export const K1: Scenario = {
  id: "K1",
  title: "a holder pauses past its lease, then writes",
  shows: "client 0 stops for 2.5 s (a GC pause) holding a 1 s lease; client 1 takes the lock and writes; client 0 wakes and writes: accepted without fencing, refused with it",
  options: { ...TWO_CLIENTS_1S_LEASE, ...FROZEN_PAST_LEASE },
  varies: LEASE_VARIES,
  predict: (o) => staleUnlessFenced(o, "client 0's write"),
};

export const K2: Scenario = {
  id: "K2",
  title: "a holder's write is delayed in the network past its lease",
  shows: "client 0's write to the resource spends 1.5 s in the network and arrives after its 1 s lease ended and client 1 wrote: accepted without fencing, refused with it",
  options: {
    ...TWO_CLIENTS_1S_LEASE,
    // Client 0 writes at 400 ms; the write reaches the resource at about 1900 ms.
    // Client 1 takes the lock at 1000 ms and writes at about 1400 ms.
    work: 400,
    stagger: 300,
    "acquire-timeout": 3000,
    // The delayed write's answer takes 3 s to come back: it must not time out.
    "command-timeout": 5000,
    // The latency lasts until the write has been answered; the run outlasts it.
    "time-limit": 4,
    fence: false,
  },
  varies: LEASE_VARIES,
  script: () => [
    // Only the link to the resource: client 0's lock traffic stays fast. In place
    // before the clients start (nothing uses that link before client 0's write), so
    // no race with a slow toxic request decides the run.
    { atMs: 0, nemesis: "latency", fault: { targets: [link(1, "resource")], latencyMs: 1500, jitterMs: 0, durationMs: 3800 } },
  ],
  predict: (o) => staleUnlessFenced(o, "client 0's delayed write"),
};
