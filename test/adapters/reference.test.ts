// The reference adapter programs of the libraries teams ran on Debian (redis-py,
// kazoo, Curator, python-etcd3), now built from their lock files at current
// versions, each run by name against servers of its own with fencing on: valid,
// written in format 2, holds fenced as each says (a Redis counter for
// redis-py, the lock node's czxid for kazoo and Curator, the key's create revision
// for python-etcd3), the pinned version the one that ran, and, for the ZooKeeper
// libraries whose listeners tell, lost holds told with `lost` notices; and the Go
// adapters (redsync, bsm/redislock), fenced from a Redis counter, and etcd's own Go
// concurrency.Mutex (the key's create revision; a Session's end told as lost),
// and Redisson's RLock (a Redis counter too) and RFencedLock (its own token, where
// stale writes must be refused and, unfenced, accepted). Under pauses only those
// with a mechanism of their own to show (kazoo's and etcd's Go Session's lost
// notices, RFencedLock's token refusing a stale write); what every library does
// under each fault is the libraries preset's finding (docs/locks.md), which
// would make this file minutes long. ShedLock's JDBC provider is fenced from a
// counter row on the run's Postgres; shedlock-redis, whose unlock DELs whatever
// holds the key, is tested hold by hold in shedlock.test.ts. The PyPI libraries
// of one backend each are tested in that backend's folder the same way.
import { referenceAdapterTests } from "./client-run.ts";

for (const c of [
  { client: "redis-py", options: ["--fence-source", "single"], fenceSource: "single", tells: false, stale: false, library: "redis-py 8.1.0", faults: false },
  { client: "kazoo", options: ["--backend", "zookeeper"], fenceSource: "czxid", tells: true, stale: false, library: "kazoo 2.11.0", faults: true },
  { client: "curator", options: ["--backend", "zookeeper"], fenceSource: "czxid", tells: true, stale: false, library: "Apache Curator 5.9.0 ", faults: false },
  { client: "python-etcd3", options: ["--backend", "etcd"], fenceSource: "create-revision", tells: false, stale: false, library: "python-etcd3 0.12.0", faults: false },
  { client: "etcd-mutex-go", options: ["--backend", "etcd"], fenceSource: "create-revision", tells: true, stale: false, library: "etcd client/v3 concurrency v3.7.3", faults: true },
  { client: "redsync", options: ["--backend", "redlock", "--fence-source", "single"], fenceSource: "single", tells: false, stale: false, library: "redsync v4.18.1 (go-redis v9.23.0)", faults: false },
  { client: "redisson", options: ["--fence-source", "single"], fenceSource: "single", tells: false, stale: false, library: "Redisson 4.7.0 RLock", faults: false },
  { client: "redisson-fenced", options: ["--pause-min", "1500", "--pause-max", "2500"], fenceSource: "token", tells: false, stale: true, library: "Redisson 4.7.0 RFencedLock", faults: true },
  { client: "bsm-redislock", options: ["--fence-source", "single"], fenceSource: "single", tells: false, stale: false, library: "bsm/redislock v0.9.4 (go-redis v9.23.0)", faults: false },
  { client: "shedlock-jdbc", options: ["--backend", "postgres", "--fence-source", "single"], fenceSource: "single", tells: false, stale: false, library: "ShedLock 7.10.1 JdbcTemplateLockProvider (JVM clock)", faults: false },
  { client: "shedlock-jdbc-dbtime", options: ["--backend", "postgres", "--fence-source", "single"], fenceSource: "single", tells: false, stale: false, library: "ShedLock 7.10.1 JdbcTemplateLockProvider usingDbTime()", faults: false },
])
  referenceAdapterTests(c);
