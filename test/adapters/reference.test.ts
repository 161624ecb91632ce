// The reference adapter programs whose runs show a mechanism of their own, one
// per language: kazoo (Python) and etcd's Go concurrency.Mutex tell a lost hold
// with a `lost` notice when their session ends under a pause, and Redisson's
// RFencedLock (Java) issues its own token, so a stale write is refused with fencing
// and accepted without. Each runs under SIGSTOP pauses against servers of its own,
// built from its lock file at the pinned version, and the version that ran is the
// one pinned. The other reference adapters' runs (redis-py, Curator,
// python-etcd3, redsync, Redisson's RLock, bsm/redislock, ShedLock's JDBC provider)
// are library tests (reference.library.test.ts, `npm run test:libraries`): a run of
// every library belongs with the libraries preset, not in every `npm test`.
import { referenceAdapterTests } from "./client-run.ts";

for (const c of [
  { client: "kazoo", options: ["--backend", "zookeeper"], fenceSource: "czxid", tells: true, stale: false, library: "kazoo 2.11.0", faults: true },
  { client: "etcd-mutex-go", options: ["--backend", "etcd"], fenceSource: "create-revision", tells: true, stale: false, library: "etcd client/v3 concurrency v3.7.3", faults: true },
  { client: "redisson-fenced", options: ["--pause-min", "1500", "--pause-max", "2500"], fenceSource: "token", tells: false, stale: true, library: "Redisson 4.7.0 RFencedLock", faults: true },
])
  referenceAdapterTests(c);
