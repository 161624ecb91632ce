// Lock clients by name, and the resource client. A workload asks for a client by
// the name the user gave (--client) and gets a LockClient; which service is behind
// it is the backend's business. Each client's module, and the library it wraps, is
// loaded when a client of that kind is first made (load): naming the clients,
// checking options and running a Redis test load no etcd, ZooKeeper or Postgres
// library, in the runner or in its workers.
import type { RedlockClientOptions } from "../backends/redis/nodes.ts";
import type { RedisReentrantOptions } from "../backends/redis/reentrant.ts";
import type { LockClient, ClientContext, ClientOptions, LockKinds } from "./lock.ts";
import { adapterClients } from "./adapter.ts";
import { isManifestPath, programAdapter, readManifest, type ProgramSpec } from "./program/index.ts";
import { repoFile } from "../lib/paths.ts";

export type { Hold, LockClient, Outcome, ClientOptions, ClientContext, ServiceAccess, PostgresAccess, Endpoint, AcquireRequest, LockKind, LockKinds } from "./lock.ts";
export { LOCK_KINDS, CANCELLED, CANCEL_UNKNOWN, FENCE_SOURCES, type FenceSource } from "./lock.ts";
export { ResourceClient } from "./resource.ts";
export { QUEUE_PREFIX, RW_PREFIX, LOCK_PREFIX, ZK_LOCK_ROOT, etcdKeyRanges } from "./places.ts";
export { isAdapterPath, adapterPath, loadAdapter, checkAdapterClient, adapterClients, type LockAdapter } from "./adapter.ts";

/** Whether a --client's history may hold notices: it runs as an adapter program (its manifest named, or a shipped one), or its library tells them. */
export const tellsNotices = (client: string): boolean => isManifestPath(client) || CLIENTS[client]?.program !== undefined || CLIENTS[client]?.notices === true;

/** How to make clients of one kind: `create` of the module `load` brings in. */
export type MakeClient = (ctx: ClientContext) => LockClient;

export interface ClientKind {
  describe: string;
  /** Loads the client's module (and the library it wraps) and gives the function that makes one client. */
  load(): Promise<MakeClient>;
  /** False for a lock that issues no fencing tokens: with --fence on it takes them from --fence-source. */
  fences?: boolean;
  /** A reference adapter program: its manifest's path from the package's root (adapters/). */
  program?: string;
  /** The lock kinds it offers beyond the mutex, and whether it can cancel a wait (absent: a mutex that cannot). */
  kinds?: LockKinds;
  /** Its library tells its user things unasked (ctx.notice): its runs write format 2 histories. */
  notices?: boolean;
}

/** One client of the kind named, its module loaded first. */
export async function createClient(name: string, ctx: ClientContext): Promise<LockClient> {
  const kind = CLIENTS[name];
  if (!kind) throw new Error(`no lock client named ${JSON.stringify(name)}`);
  return (await kind.load())(ctx);
}

/** redis-semaphore-racy's pause between its GET and its INCR: a slow client, so that two waiters read the same count often. */
const RACY_GAP_MS = 5;

export const CLIENTS: Record<string, ClientKind> = {
  redis: {
    describe: "SET NX PX + INCR fence in one Lua script; compare-and-delete release",
    load: async () => {
      const { RedisLock } = await import("../backends/redis/client.ts");
      return (ctx) => new RedisLock({ ...ctx, endpoint: ctx.endpoints[0] });
    },
  },
  "redis-unsafe-release": {
    describe: "as redis, but releases with GET then DEL (the T1 bug, kept on purpose)",
    load: async () => {
      const { RedisLock } = await import("../backends/redis/client.ts");
      return (ctx) => new RedisLock({ ...ctx, endpoint: ctx.endpoints[0], unsafeRelease: true, releaseGapMs: ctx.options.releaseGapMs });
    },
  },
  "redis-blind-renew": {
    describe: "as redis, but renews with SET PX without checking the owner: re-takes a lost lock silently (L1, kept on purpose)",
    load: async () => {
      const { RedisLock } = await import("../backends/redis/client.ts");
      return (ctx) => new RedisLock({ ...ctx, endpoint: ctx.endpoints[0], blindRenew: true });
    },
  },
  "node-redlock": {
    describe: "npm redlock 5.0.0-beta.2 over every node: decides at the first quorum, never checks validity (K5)",
    load: async () => {
      const { NodeRedlock } = await import("../backends/redlock/node-redlock.ts");
      return (ctx) => new NodeRedlock(redlockOptions(ctx));
    },
  },
  "node-redlock-4": {
    describe: "npm redlock 4.2.0 over every node: waits for all, checks validity",
    load: async () => {
      const { NodeRedlock4 } = await import("../backends/redlock/node-redlock-4.ts");
      return (ctx) => new NodeRedlock4(redlockOptions(ctx));
    },
  },
  "sesame-redlock": {
    describe: "npm @sesamecare-oss/redlock 1.4.0 (node-redlock's maintained fork) over every node, its own retries on; no fence (use --fence-source)",
    // Its holds carry none: a fence only from --fence-source, never the max-incr the other Redlock clients default to.
    load: async () => {
      const { SesameRedlock } = await import("../backends/redlock/sesame-redlock.ts");
      return (ctx) => new SesameRedlock({ ...redlockOptions(ctx), fenceSource: ctx.options.fenceSource ?? "none" });
    },
    fences: false,
  },
  redlock: {
    describe: "the Redis documentation's Redlock: parallel SET NX PX, majority, validity check, unlock all on failure",
    load: async () => {
      const { RedlockLock } = await import("../backends/redlock/client.ts");
      return (ctx) => new RedlockLock(redlockOptions(ctx));
    },
  },
  "redis-semaphore": {
    describe: "redis-semaphore 5.8 Mutex: SET NX PX with its own retries and refresh timer, cancelled by AbortSignal; no fence (use --fence-source)",
    fences: false,
    kinds: { cancel: true },
    load: async () => (await adapterClients((await import("../backends/redis/redis-semaphore.ts")).redisSemaphore)).create,
  },
  "redis-reentrant": reentrantClient(
    "a reentrant lock in Redisson's RLock layout: a hash of owner -> count with a PEXPIRE lease; fence = INCR on free-to-held, a re-entry keeps it (Hazelcast FencedLock's promise) and refreshes the lease",
    { fenceOnReentry: "same" },
  ),
  "redis-fenced-reentrant": reentrantClient(
    "as redis-reentrant, but like Redisson's RFencedLock: the acquire script INCRs the fence at every acquire, re-entries included",
    { fenceOnReentry: "new" },
  ),
  "redis-reentrant-unsafe-release": reentrantClient(
    "as redis-reentrant, but a release deletes the hash whatever the count: the inner release frees the outer hold (kept on purpose)",
    { fenceOnReentry: "same", unsafeRelease: true },
  ),
  "redis-reentrant-no-refresh": reentrantClient(
    "as redis-reentrant, but a re-entry leaves the lease as it was: a late re-entry counts on a lease that ends at the outer acquire's TTL (kept on purpose)",
    { fenceOnReentry: "same", refreshOnReentry: false },
  ),
  "redis-semaphore-counting": {
    describe: "redis-semaphore 5.8 Semaphore of --lock semaphore:N: a sorted set of holders, its own retries and refresh timer, cancelled by AbortSignal; no fence (use --fence-source)",
    fences: false,
    kinds: { semaphore: true, cancel: true },
    load: async () => (await adapterClients((await import("../backends/redis/redis-semaphore-counting.ts")).redisSemaphoreCounting)).create,
  },
  "redis-multi-semaphore": {
    describe: "redis-semaphore 5.8 MultiSemaphore of --lock semaphore:N, one permit a hold: as redis-semaphore-counting; no fence (use --fence-source)",
    fences: false,
    kinds: { semaphore: true, cancel: true },
    load: async () => (await adapterClients((await import("../backends/redis/redis-semaphore-counting.ts")).redisMultiSemaphore)).create,
  },
  "redis-semaphore-racy": {
    describe: `a semaphore whose count is read (GET), then raised (INCR) ${RACY_GAP_MS} ms later in another round trip: two clients take the last permit (kept on purpose); fence = INCR of one counter after the grant`,
    kinds: { semaphore: true, cancel: true },
    load: async () => {
      const { RedisRacySemaphore } = await import("../backends/redis/semaphore-racy.ts");
      return (ctx) => new RedisRacySemaphore(ctx, RACY_GAP_MS);
    },
  },
  "simple-redis-mutex": {
    describe: "simple-redis-mutex 3.0.0: SET NX PX, waits by pub/sub with failAfter, fence = INCR of one global counter after the SET",
    // Its holds carry its own fence, so it is made as it is, with no counter fences.
    load: async () => (await import("../backends/redis/simple-redis-mutex.ts")).simpleRedisMutex.create,
  },
  "etcd-queue": {
    describe: "etcd lease + FIFO queue of keys by create revision (Go's concurrency.Mutex); fence = its key's create revision; a cancelled waiter revokes its lease",
    load: async () => {
      const { EtcdQueueLock } = await import("../backends/etcd/queue.ts");
      return (ctx) => new EtcdQueueLock(ctx);
    },
    kinds: { cancel: true },
  },
  "etcd-queue-cancel-delete": {
    describe: "as etcd-queue, but a cancelled waiter deletes only its key; if the delete is lost, the key holds up the queue until its lease expires (kept on purpose)",
    load: async () => {
      const { EtcdQueueLock } = await import("../backends/etcd/queue.ts");
      return (ctx) => new EtcdQueueLock(ctx, "delete");
    },
    kinds: { cancel: true },
  },
  "etcd-rw": {
    describe: "etcd read-write lock in the layout of Go's recipes.RWMutex: read/ and write/ keys in one queue by create revision; fence = its key's create revision",
    load: async () => {
      const { EtcdRwLock } = await import("../backends/etcd/rw.ts");
      return (ctx) => new EtcdRwLock(ctx);
    },
    kinds: { rw: true, cancel: true },
  },
  "etcd-rw-writer-naive": {
    describe: "as etcd-rw, but a writer waits for older writers only, as a reader does (one prefix wrong), so it is granted while readers hold; kept on purpose",
    load: async () => {
      const { EtcdRwLock } = await import("../backends/etcd/rw.ts");
      return (ctx) => new EtcdRwLock(ctx, true);
    },
    kinds: { rw: true, cancel: true },
  },
  "etcd3-lock": {
    describe: "the etcd3 package's lock (lease + put-if-absent, retried); fence = create_revision read after acquiring",
    load: async () => {
      const { Etcd3Lock } = await import("../backends/etcd/etcd3-lock.ts");
      return (ctx) => new Etcd3Lock(ctx);
    },
  },
  zookeeper: {
    describe: "ZooKeeper's recipe: ephemeral sequential node with the session id in its name (protection mode), lowest holds, each waiter watches the next lower; fence = the node's czxid",
    load: async () => {
      const { ZkLock } = await import("../backends/zookeeper/client.ts");
      return (ctx) => new ZkLock(ctx);
    },
    kinds: { cancel: true },
  },
  "zookeeper-naive": {
    describe: "the same recipe without protection mode (a create whose reply was lost is sent again) and without a session check after an expiry (CURATOR-206/604), kept on purpose",
    load: async () => {
      const { ZkLock } = await import("../backends/zookeeper/client.ts");
      return (ctx) => new ZkLock(ctx, true);
    },
  },
  "zookeeper-cancel-naive": {
    describe: "as zookeeper, but a cancelled waiter answers \"cancelled\" at once without deleting its node or looking whether its turn came: the node stays queued under its live session and holds the lock for nobody (kept on purpose)",
    load: async () => {
      const { ZkLock } = await import("../backends/zookeeper/client.ts");
      return (ctx) => new ZkLock(ctx, false, true);
    },
    kinds: { cancel: true },
  },
  "zookeeper-rw": {
    describe: "ZooKeeper's shared-lock recipe: read- and write- ephemeral sequential nodes (protection mode); a reader waits for lower write- nodes, a writer for any lower node; fence = the node's czxid",
    load: async () => {
      const { ZkRwLock } = await import("../backends/zookeeper/rw.ts");
      return (ctx) => new ZkRwLock(ctx);
    },
    kinds: { rw: true, cancel: true },
  },
  // Reference adapter programs (adapters/, docs/adapter-protocol.md): the lock libraries of other languages, as their users call them.
  "redis-py": programClient("adapters/redis-py/adapter.json"),
  // redis-py #4279, kept on purpose: reacquire() of a Lock made with timeout=0 deletes its key.
  "redis-py-timeout-0": programClient("adapters/redis-py/timeout-0.adapter.json"),
  kazoo: programClient("adapters/kazoo/adapter.json"),
  curator: programClient("adapters/curator/adapter.json"),
  "python-etcd3": programClient("adapters/python-etcd3/adapter.json"),
  // python-etcd3 #599, kept on purpose: the with-block enters after a failed acquire.
  "python-etcd3-with": programClient("adapters/python-etcd3/with.adapter.json"),
  "postgres-lease": {
    describe: "a lease row: UPDATE ... WHERE expired (server clock) RETURNING fence+1; renew and release compare the owner; freed by expiry only",
    load: async () => {
      const { PostgresLeaseLock } = await import("../backends/postgres/lease.ts");
      return (ctx) => new PostgresLeaseLock(ctx);
    },
  },
  "postgres-advisory": {
    describe: "pg_advisory_lock on a session of its own, fence from a counter row written with the grant; freed when the session ends (idle_session_timeout = --ttl while holding)",
    load: async () => {
      const { PostgresAdvisoryLock } = await import("../backends/postgres/advisory.ts");
      return (ctx) => new PostgresAdvisoryLock(ctx);
    },
    kinds: { rw: true, cancel: true },
  },
  "dynamodb-cas": {
    describe: "one conditional UpdateItem grants: owner and lease end set if unheld or the lease (by the client's clock) is over, fence ADDed in the same write; renew and release conditional on the owner",
    load: async () => {
      const { DynamoCasLock } = await import("../backends/dynamodb/cas.ts");
      return (ctx) => new DynamoCasLock(ctx);
    },
  },
  "dynamodb-rvn": {
    describe: "AWS's DynamoDB Lock Client's algorithm: heartbeats write a new record version number; a waiter takes over only after seeing the same one for a whole lease (no clock compared); fence ADDed with each grant",
    load: async () => {
      const { DynamoRvnLock } = await import("../backends/dynamodb/rvn.ts");
      return (ctx) => new DynamoRvnLock(ctx);
    },
  },
  "dynamodb-lock-client": {
    describe: "npm dynamodb-lock-client 0.7.3 (FailOpen, v2 aws-sdk, retries off): waits a lease, then a put conditional on the guid it saw; heartbeats itself; fence = its fencingToken; a failed heartbeat is a suspended notice",
    notices: true,
    load: async () => {
      const { DynamoLockClientLibrary } = await import("../backends/dynamodb/dynamodb-lock-client.ts");
      return (ctx) => new DynamoLockClientLibrary(ctx);
    },
  },
  lockserver: {
    describe: "our lock server of the seed's design (one server): acquire waits in its FIFO queue, lease by the server's clock, renew and release by the holder only; fence = the server's counter for the key, one per grant",
    load: async () => {
      const { LockServerLock } = await import("../backends/lockserver/client.ts");
      return (ctx) => new LockServerLock(ctx);
    },
  },
  "lockserver-majority": {
    describe:
      "the seed's replicated lock manager over five independent lock servers (no consensus): held when a majority granted within the lease; renew and release on all; fence by --fence-source: the largest of the granting servers' (max-incr, the default) or lockserver-1's counter alone (single)",
    load: async () => {
      const { LockServerMajority } = await import("../backends/lockserver/majority.ts");
      return (ctx) => new LockServerMajority(ctx);
    },
  },
};

/** A reentrant Redis lock (redis-reentrant.ts); it polls, so it can cancel a wait. */
function reentrantClient(describe: string, opts: RedisReentrantOptions): ClientKind {
  return {
    describe,
    kinds: { reentrant: { fenceOnReentry: opts.fenceOnReentry }, cancel: true },
    load: async () => {
      const { RedisReentrantLock } = await import("../backends/redis/reentrant.ts");
      return (ctx) => new RedisReentrantLock(ctx, opts);
    },
  };
}

/**
 * A reference adapter program by its manifest under the package's root, which
 * says what it is and whether it fences (read when first asked); fences from
 * --fence-source where its lock issues none.
 */
function programClient(manifest: string): ClientKind {
  let spec: ProgramSpec | undefined;
  const read = (): ProgramSpec => (spec ??= readManifest(repoFile(manifest)));
  return {
    program: manifest,
    get describe() {
      return read().describe;
    },
    get fences() {
      return read().fences;
    },
    get kinds() {
      return read().kinds;
    },
    load: async () => (await adapterClients(programAdapter(read()))).create,
  };
}

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
