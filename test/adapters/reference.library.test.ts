// Library tests (`npm run test:libraries`): the reference adapter programs of the
// libraries teams ran on Debian (redis-py, Curator, python-etcd3), now built from
// their lock files at current versions, the Go adapters (redsync, bsm/redislock),
// Redisson's RLock and ShedLock's JDBC provider, each run by name against servers
// of its own with fencing on and without faults: valid, written in format 2,
// holds fenced as each says (a Redis counter, the lock node's czxid for Curator,
// the key's create revision for python-etcd3), the pinned version the one that
// ran. What each does under faults is the libraries preset's finding
// (docs/locks.md). ShedLock's JDBC provider is fenced from a counter row on the
// run's Postgres; shedlock-redis, whose unlock DELs whatever holds the key, is
// tested hold by hold in shedlock.test.ts. Those with a mechanism to show under
// pauses run in every `npm test` (reference.test.ts).
import { referenceAdapterTests } from "./client-run.ts";

for (const c of [
  { client: "redis-py", options: ["--fence-source", "single"], fenceSource: "single", tells: false, stale: false, library: "redis-py 8.1.0", faults: false },
  { client: "curator", options: ["--backend", "zookeeper"], fenceSource: "czxid", tells: true, stale: false, library: "Apache Curator 5.9.0 ", faults: false },
  { client: "python-etcd3", options: ["--backend", "etcd"], fenceSource: "create-revision", tells: false, stale: false, library: "python-etcd3 0.12.0", faults: false },
  { client: "redsync", options: ["--backend", "redlock", "--fence-source", "single"], fenceSource: "single", tells: false, stale: false, library: "redsync v4.18.1 (go-redis v9.23.0)", faults: false },
  { client: "redisson", options: ["--fence-source", "single"], fenceSource: "single", tells: false, stale: false, library: "Redisson 4.7.0 RLock", faults: false },
  { client: "bsm-redislock", options: ["--fence-source", "single"], fenceSource: "single", tells: false, stale: false, library: "bsm/redislock v0.9.4 (go-redis v9.23.0)", faults: false },
  { client: "shedlock-jdbc", options: ["--backend", "postgres", "--fence-source", "single"], fenceSource: "single", tells: false, stale: false, library: "ShedLock 7.10.1 JdbcTemplateLockProvider (JVM clock)", faults: false },
  { client: "shedlock-jdbc-dbtime", options: ["--backend", "postgres", "--fence-source", "single"], fenceSource: "single", tells: false, stale: false, library: "ShedLock 7.10.1 JdbcTemplateLockProvider usingDbTime()", faults: false },
])
  referenceAdapterTests(c);
