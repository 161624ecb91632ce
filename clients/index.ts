// Lock clients by name, and the resource client. A workload asks for a client by
// the name the user gave (--client) and gets a LockClient; which service is behind
// it is the backend's business.
import { RedisLock } from "./redis.ts";
import { RedlockLock } from "./redlock.ts";
import { NodeRedlock } from "./node-redlock.ts";
import { NodeRedlock4 } from "./node-redlock-4.ts";
import { SesameRedlock } from "./sesame-redlock.ts";
import { EtcdQueueLock, QUEUE_PREFIX } from "./etcd-queue.ts";
import { Etcd3Lock, LOCK_PREFIX } from "./etcd3-lock.ts";
import type { RedlockClientOptions } from "./redlock-nodes.ts";
import type { LockClient, ClientContext, ClientOptions } from "./lock.ts";
import { adapterClients } from "./adapter.ts";
import { redisSemaphore } from "./redis-semaphore.ts";
import { simpleRedisMutex } from "./simple-redis-mutex.ts";
import { ZkLock } from "./zookeeper.ts";
import { PostgresLeaseLock } from "./postgres-lease.ts";
import { PostgresAdvisoryLock } from "./postgres-advisory.ts";

export type { Hold, LockClient, Outcome, ClientOptions, ClientContext, Endpoint } from "./lock.ts";
export { ResourceClient } from "./resource.ts";
export { LOCK_TABLES_SQL } from "./postgres-session.ts";

/** Where the etcd clients keep a key's lock: what a run with keys under `keyPrefix` leaves, if anything. */
export const etcdKeyRanges = (keyPrefix: string): string[] => [`${QUEUE_PREFIX}/${keyPrefix}`, `${LOCK_PREFIX}/${keyPrefix}`];
export { LOCK_ROOT as ZK_LOCK_ROOT } from "./zookeeper.ts";
export { isAdapterPath, adapterPath, loadAdapter, checkAdapterClient, adapterClients, type LockAdapter } from "./adapter.ts";

export interface ClientKind {
  describe: string;
  create(ctx: ClientContext): LockClient;
  /** False for a lock that issues no fencing tokens: with --fence on it takes them from --fence-source. */
  fences?: boolean;
}

export const CLIENTS: Record<string, ClientKind> = {
  redis: {
    describe: "SET NX PX + INCR fence in one Lua script; compare-and-delete release",
    create: (ctx) => new RedisLock({ ...ctx, endpoint: ctx.endpoints[0] }),
  },
  "redis-unsafe-release": {
    describe: "as redis, but releases with GET then DEL (the T1 bug, kept on purpose)",
    create: (ctx) => new RedisLock({ ...ctx, endpoint: ctx.endpoints[0], unsafeRelease: true, releaseGapMs: ctx.options.releaseGapMs }),
  },
  "redis-blind-renew": {
    describe: "as redis, but renews with SET PX without checking the owner: re-takes a lost lock silently (L1, kept on purpose)",
    create: (ctx) => new RedisLock({ ...ctx, endpoint: ctx.endpoints[0], blindRenew: true }),
  },
  "node-redlock": {
    describe: "npm redlock 5.0.0-beta.2 over every node: decides at the first quorum, never checks validity (K5)",
    create: (ctx) => new NodeRedlock(redlockOptions(ctx)),
  },
  "node-redlock-4": {
    describe: "npm redlock 4.2.0 over every node: waits for all, checks validity",
    create: (ctx) => new NodeRedlock4(redlockOptions(ctx)),
  },
  "sesame-redlock": {
    describe: "npm @sesamecare-oss/redlock 1.4.0 (node-redlock's maintained fork) over every node, its own retries on; no fence (use --fence-source)",
    // Its holds carry none: a fence only from --fence-source, never the max-incr the other Redlock clients default to.
    create: (ctx) => new SesameRedlock({ ...redlockOptions(ctx), fenceSource: ctx.options.fenceSource ?? "none" }),
    fences: false,
  },
  redlock: {
    describe: "the Redis documentation's Redlock: parallel SET NX PX, majority, validity check, unlock all on failure",
    create: (ctx) => new RedlockLock(redlockOptions(ctx)),
  },
  "redis-semaphore": { ...adapterClients(redisSemaphore), describe: redisSemaphore.describe, fences: false },
  // Its holds carry its own fence, so it is made as it is, with no counter fences.
  "simple-redis-mutex": { describe: simpleRedisMutex.describe, create: simpleRedisMutex.create },
  "etcd-queue": {
    describe: "etcd lease + FIFO queue of keys by create revision (Go's concurrency.Mutex); fence = its key's create revision",
    create: (ctx) => new EtcdQueueLock(ctx),
  },
  "etcd3-lock": {
    describe: "the etcd3 package's lock (lease + put-if-absent, retried); fence = create_revision read after acquiring",
    create: (ctx) => new Etcd3Lock(ctx),
  },
  zookeeper: {
    describe: "ZooKeeper's recipe: ephemeral sequential node with the session id in its name (protection mode), lowest holds, each waiter watches the next lower; fence = the node's czxid",
    create: (ctx) => new ZkLock(ctx),
  },
  "zookeeper-naive": {
    describe: "the same recipe without protection mode (a create whose reply was lost is sent again) and without a session check after an expiry (CURATOR-206/604), kept on purpose",
    create: (ctx) => new ZkLock(ctx, true),
  },
  "postgres-lease": {
    describe: "a lease row: UPDATE ... WHERE expired (server clock) RETURNING fence+1; renew and release compare the owner; freed by expiry only",
    create: (ctx) => new PostgresLeaseLock(ctx),
  },
  "postgres-advisory": {
    describe: "pg_advisory_lock on a session of its own, fence from a counter row written with the grant; freed when the session ends (idle_session_timeout = --ttl while holding)",
    create: (ctx) => new PostgresAdvisoryLock(ctx),
  },
};

function redlockOptions(ctx: ClientContext): RedlockClientOptions {
  return {
    endpoints: ctx.endpoints,
    ownerPrefix: ctx.ownerPrefix,
    commandTimeoutMs: ctx.commandTimeoutMs,
    rng: ctx.rng,
    fenceSource: ctx.options.fenceSource ?? "max-incr",
    checkValidity: ctx.options.checkValidity ?? true,
    pauseAfterRepliesMs: pausesHere(ctx.options.pauseAfterReplies, ctx.id),
  };
}

function pausesHere(p: ClientOptions["pauseAfterReplies"], id: number | undefined): number {
  if (!p) return 0;
  return p.clients === "all" || (id !== undefined && p.clients.includes(id)) ? p.ms : 0;
}
