// etcd's rows of the catalogue that are its libraries' users' reports (E1,
// python-etcd3 #599, is in scenarios/libraries.ts).
//
// E2 is etcd #10811 ("a mutex lock in concurrency package might be held by two
// clients if one of them had network issue with etcd"): client A holds
// concurrency.Mutex, its network to etcd fails, the lease expires, etcd gives the
// lock to the waiting B, and A, which still believes it holds, writes beside B.
// The maintainers' answer (#6127, #10811) is the Session: it keeps the lease
// alive and closes Done() when the keep-alive's deadline passes, which the
// client's lease code computes from the last answer it had, without hearing from
// etcd. The etcd-mutex-go adapter watches Done() as a user should and tells a
// `lost` notice; the workload then stops using the hold. So at client/v3 v3.7.3
// the report does not reproduce for a user who watches Done(): the holder is
// told during the cut and never writes. Told late, though: the client's deadline
// counts from the keep-alive's answer and is checked every 500 ms, so Done()
// closed 644 and 884 ms after etcd had granted client 1 in two runs; a write due in
// that window would have been stale, and only the fence (the key's create
// revision, --fence on) refuses it.
import { ONE_HOLD_EACH, cut, type Scenario } from "../../core/scenario.ts";

const MEMBERS = ["etcd-1", "etcd-2", "etcd-3"];

/** E2's cut of client 0's links: after its grant, longer than its 1 s lease and the 500 ms between etcd's expiry checks. */
const E2_CUT_AT = 1500;
const E2_CUT_MS = 3500;

export const E2: Scenario = {
  id: "E2",
  title: "etcd Go concurrency.Mutex: a holder cut from etcd past its lease (etcd #10811; no anomaly at v3.7.3, Session.Done() tells it)",
  shows:
    "client 0 holds etcd-mutex-go's Mutex on a 1 s Session for a 5 s job; its links to the three members are cut from 1500 ms to 5000 ms, so etcd expires the lease and grants client 1, waiting since 1000 ms; client 0's Session closes Done() when its keep-alive deadline passes, during the cut, the adapter tells a lost notice and client 0 never writes: the run is valid",
  options: {
    ...ONE_HOLD_EACH,
    backend: "etcd",
    client: "etcd-mutex-go",
    concurrency: 2,
    workers: 2,
    // A 1 s lease (etcd's are whole seconds); the Session sends a keep-alive every third of it.
    ttl: 1000,
    // The job: client 0 would write 5000 ms after its grant (within the first second:
    // the Go program starts in milliseconds), about two seconds after its Session
    // closes Done() (the keep-alive deadline, about 2500 ms, checked every 500 ms),
    // and no earlier than the heal.
    pause: 5000,
    "pause-clients": ["0"],
    "pause-at": "acquire",
    work: 0,
    stagger: 1000,
    // Client 1 waits through the cut until etcd expires client 0's lease.
    "acquire-timeout": 5000,
    // The cut heals at 5 s: the run lasts past it.
    "time-limit": 7,
    fence: false,
  },
  varies: {
    fence: "on: the same (client 0 never writes, so nothing is refused)",
  },
  script: () => [{ atMs: E2_CUT_AT, nemesis: "partition", fault: { targets: cut(1, MEMBERS), durationMs: E2_CUT_MS } }],
  predict: () => ({
    anomalies: [],
    why: "client 0's Session closes Done() when its keep-alive deadline passes during the cut; told lost, it stops before its write, and client 1 holds alone",
  }),
};
