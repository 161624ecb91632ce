// --backend redis: one redis-server, and the Redis locks people use on it: the
// SET NX PX lock of the Redis documentation (and its known mistakes, kept on
// purpose), reentrant locks in Redisson's layout, redis-semaphore's mutex and
// semaphores, simple-redis-mutex, and redis-py and python-redis-lock by their
// reference adapter programs.
// Redis counters give fences to a lock that issues none (--fence-source). Each
// client's module, and the library it wraps, is loaded when a client of that
// kind is first made: declaring them loads no Redis library.
import { adapterClients, shippedProgram, type ClientContext, type FenceCounter } from "../../clients/index.ts";
import type { Backend, BackendContext, BackendOption, ClientKind } from "../../core/index.ts";
import type { RedisNodeOptions, RedisPersistence } from "./server.ts";
import type { RedisReentrantOptions } from "./reentrant.ts";
import { F3, L5 } from "./scenarios.ts";
import { BSM_REDISLOCK, PYTHON_REDIS_LOCK, REDIS, REDIS_PY, REDIS_SERVER, REDIS_VERSION, REDISSON } from "./programs.ts";
import { SHEDLOCK } from "../postgres/programs.ts";

/** Redis' own option: what a killed node remembers. Redlock's nodes are Redis servers and take it too. */
export const REDIS_PERSISTENCE = {
  name: "redis-persistence",
  kind: "string",
  default: "none",
  choices: ["none", "everysec", "always"],
  help: "Redis AOF fsync policy: what a killed node remembers (none: nothing)",
} as const satisfies BackendOption;

const RELEASE_GAP = {
  name: "release-gap",
  kind: "int",
  default: undefined,
  defaultText: "0",
  min: 0,
  help: "--client redis-unsafe-release: ms between its GET and its DEL (lands T1 on demand)",
  clients: { names: ["redis-unsafe-release"], why: "the others release in one step" },
} as const satisfies BackendOption;

/** How a Redis backend's nodes start, from its options. */
export function redisNodeOptions(ctx: BackendContext): RedisNodeOptions {
  return {
    runDir: ctx.runDir,
    persistence: (ctx.options[REDIS_PERSISTENCE.name] as RedisPersistence | undefined) ?? "none",
    skewableClock: ctx.serverOptions.skewableClocks,
    deployment: ctx.deployment,
  };
}

export const redisNames = (n: number): string[] => Array.from({ length: n }, (_, i) => `redis-${i + 1}`);

/** ioredis is loaded by the runs that remove keys (--deploy external) only: every other run's start is spared it (about 80 ms). */
export async function removeRedisKeys(nodes: readonly { name: string; host: string; port: number }[], prefix: string): Promise<number> {
  const { removeKeysUnder } = await import("./client.ts");
  const counts = await Promise.all(nodes.map((n) => removeKeysUnder(n, prefix, 5000)));
  return counts.reduce((a, b) => a + b, 0);
}

/** INCR on the backend's nodes after each grant, for a lock that issues no fence (ioredis loaded only then). */
export const redisFenceCounter = async (): Promise<FenceCounter> => {
  const { CounterFenced } = await import("./counter-fenced.ts");
  return (inner, ctx, source) => new CounterFenced(inner, ctx, source);
};

/** redis-semaphore-racy's pause between its GET and its INCR: a slow client, so that two waiters read the same count often. */
const RACY_GAP_MS = 5;

const releaseGap = (ctx: ClientContext): number | undefined => ctx.options.own?.[RELEASE_GAP.name] as number | undefined;

/** A reentrant Redis lock (reentrant.ts); it polls, so it can cancel a wait. */
function reentrantClient(describe: string, opts: RedisReentrantOptions): ClientKind {
  return {
    describe,
    kinds: { reentrant: { fenceOnReentry: opts.fenceOnReentry }, cancel: true },
    load: async () => {
      const { RedisReentrantLock } = await import("./reentrant.ts");
      return (ctx) => new RedisReentrantLock(ctx, opts);
    },
  };
}

const CLIENTS: Record<string, ClientKind> = {
  redis: {
    describe: "SET NX PX + INCR fence in one Lua script; compare-and-delete release",
    load: async () => {
      const { RedisLock } = await import("./client.ts");
      return (ctx) => new RedisLock({ ...ctx, endpoint: ctx.endpoints[0] });
    },
  },
  "redis-unsafe-release": {
    describe: "as redis, but releases with GET then DEL (the T1 bug, kept on purpose)",
    load: async () => {
      const { RedisLock } = await import("./client.ts");
      return (ctx) => new RedisLock({ ...ctx, endpoint: ctx.endpoints[0], unsafeRelease: true, releaseGapMs: releaseGap(ctx) });
    },
  },
  "redis-blind-renew": {
    describe: "as redis, but renews with SET PX without checking the owner: re-takes a lost lock silently (L1, kept on purpose)",
    load: async () => {
      const { RedisLock } = await import("./client.ts");
      return (ctx) => new RedisLock({ ...ctx, endpoint: ctx.endpoints[0], blindRenew: true });
    },
  },
  "redis-semaphore": {
    package: "redis-semaphore",
    describe: "redis-semaphore 5.8 Mutex: SET NX PX with its own retries and refresh timer, cancelled by AbortSignal; no fence (use --fence-source)",
    fences: false,
    kinds: { cancel: true },
    load: async () => (await adapterClients((await import("./redis-semaphore.ts")).redisSemaphore, redisFenceCounter)).create,
  },
  "simple-redis-mutex": {
    package: "simple-redis-mutex",
    describe: "simple-redis-mutex 3.0.0: SET NX PX, waits by pub/sub with failAfter, fence = INCR of one global counter after the SET",
    // Its holds carry its own fence, so it is made as it is, with no counter fences.
    load: async () => (await import("./simple-redis-mutex.ts")).simpleRedisMutex.create,
  },
  // A reference adapter program (adapters/, docs/adapter-protocol.md): redis-py's Lock, as its users call it.
  "redis-py": { ...shippedProgram("adapters/python/redis-py.adapter.json", redisFenceCounter), needs: REDIS_PY },
  // redis-py #4279, kept on purpose: reacquire() of a Lock made with timeout=0 deletes its key.
  "redis-py-timeout-0": { ...shippedProgram("adapters/python/redis-py-timeout-0.adapter.json", redisFenceCounter), needs: REDIS_PY },
  // python-redis-lock 4.0.1 from PyPI, its renewal thread keeping the lease (renew "automatic").
  "python-redis-lock": { ...shippedProgram("adapters/python/python-redis-lock.adapter.json", redisFenceCounter), needs: PYTHON_REDIS_LOCK },
  // bsm/redislock v0.9.4 (Go, go-redis v9.23.0) by its reference adapter program, built from adapters/go/go.mod; v0.9.4 issues no fence.
  "bsm-redislock": { ...shippedProgram("adapters/go/redislock/bsm-redislock.adapter.json", redisFenceCounter), needs: BSM_REDISLOCK },
  // Redisson 4.7.0 from Maven Central (Java): RLock renewed by its watchdog (renew "automatic"), no fence.
  redisson: { ...shippedProgram("adapters/java/redisson/redisson.adapter.json", redisFenceCounter), needs: REDISSON },
  // The same, RFencedLock: the token tryLockAndGetToken returns is the fence.
  "redisson-fenced": { ...shippedProgram("adapters/java/redisson/redisson-fenced.adapter.json"), needs: REDISSON },
  // ShedLock 7.10.1's RedisLockProvider (Java, spring-data-redis over Lettuce): SET NX PX, an unlock that DELs
  // without checking the value; no fence, so fences from the Redis counter. Its environment is the JDBC ones'.
  "shedlock-redis": { ...shippedProgram("adapters/java/shedlock/shedlock-redis.adapter.json", redisFenceCounter), needs: SHEDLOCK },
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
    package: "redis-semaphore",
    describe: "redis-semaphore 5.8 Semaphore of --lock semaphore:N: a sorted set of holders, its own retries and refresh timer, cancelled by AbortSignal; no fence (use --fence-source)",
    fences: false,
    kinds: { semaphore: true, cancel: true },
    load: async () => (await adapterClients((await import("./redis-semaphore-counting.ts")).redisSemaphoreCounting, redisFenceCounter)).create,
  },
  "redis-multi-semaphore": {
    package: "redis-semaphore",
    describe: "redis-semaphore 5.8 MultiSemaphore of --lock semaphore:N, one permit a hold: as redis-semaphore-counting; no fence (use --fence-source)",
    fences: false,
    kinds: { semaphore: true, cancel: true },
    load: async () => (await adapterClients((await import("./redis-semaphore-counting.ts")).redisMultiSemaphore, redisFenceCounter)).create,
  },
  "redis-semaphore-racy": {
    describe: `a semaphore whose count is read (GET), then raised (INCR) ${RACY_GAP_MS} ms later in another round trip: two clients take the last permit (kept on purpose); fence = INCR of one counter after the grant`,
    kinds: { semaphore: true, cancel: true },
    load: async () => {
      const { RedisRacySemaphore } = await import("./semaphore-racy.ts");
      return (ctx) => new RedisRacySemaphore(ctx, RACY_GAP_MS);
    },
  },
};

export const backend = {
  name: "redis",
  describe: "one redis-server",
  clients: CLIENTS,
  defaultClient: "redis",
  abilities: ["kill", "clock"],
  start: async (ctx) => (await import("./servers.ts")).startRedisCluster(ctx.group, ctx.ports, 1, redisNodeOptions(ctx)),
  programs: [REDIS_SERVER],
  serverNames: redisNames(1),
  removeKeys: removeRedisKeys,
  options: [REDIS_PERSISTENCE, RELEASE_GAP],
  needs: { servers: REDIS },
  versions: { "redis-server": REDIS_VERSION },
  packages: ["ioredis", "redis", "redis-semaphore", "simple-redis-mutex"],
  fenceCounter: redisFenceCounter,
  scenarios: [L5, F3],
} as const satisfies Backend;
