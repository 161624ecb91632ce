// The single-node Redis lock of the Redis documentation: SET NX PX to acquire, and
// Lua scripts that compare the owner before they touch the key. The fence comes
// from INCR fence:{key} in the same script as the SET, so the counter moves only
// when a hold is granted. (`{key}` is a hash tag: lock and counter share a slot.)
import { Redis } from "ioredis";
import { pollAcquire, type Hold, type LockClient, type Outcome } from "../../clients/lock.ts";
import { sleep, type Rng } from "../../lib/index.ts";
import { REDIS_LOCK_SCRIPTS } from "./scripts.ts";

export { REDIS_LOCK_SCRIPTS };

const { acquire: ACQUIRE, renew: RENEW, release: RELEASE } = REDIS_LOCK_SCRIPTS;

export interface RedisEndpoint {
  host: string;
  port: number;
}

export interface RedisLockOptions {
  endpoint: RedisEndpoint;
  /** Names owners; must be unique across the run (the logical client's process). */
  ownerPrefix: string;
  /** A command with no answer after this long is an unknown outcome, not a failure. */
  commandTimeoutMs: number;
  rng: Rng;
  /**
   * The classic broken release: GET, compare in the client, then DEL. Between the
   * two round trips the lease can expire and another client acquire, and the DEL
   * then deletes the new holder's lock (T1 in the catalogue). Kept on purpose.
   */
  unsafeRelease?: boolean;
  /** With unsafeRelease: ms between the GET and the DEL (a slow client), to land T1 on demand. */
  releaseGapMs?: number;
  /**
   * The blind refresh: renew with SET key owner PX ttl, without asking whether the
   * key is still ours. A lapsed lock is re-taken silently, a lock another client
   * now holds is taken from it, and the renew says ok either way: the lost lock
   * goes unnoticed (redis-semaphore #175, etcd3 #110; L1 in the catalogue). Kept on purpose.
   */
  blindRenew?: boolean;
}

// removeKeysUnder below matches this layout.
export const fenceKey = (key: string): string => `fence:{${key}}`;

/** A Redis connection that never retries or queues behind our back: a history must be honest. */
export function honestRedis(endpoint: RedisEndpoint, commandTimeoutMs: number): Redis {
  return new Redis({
    host: endpoint.host,
    port: endpoint.port,
    lazyConnect: true,
    commandTimeout: commandTimeoutMs,
    connectTimeout: commandTimeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    enableReadyCheck: false,
    retryStrategy: () => 100,
  });
}

/**
 * A client's own honestRedis, connected on first use (`ready`), once however many
 * commands ask at once; afterwards a command on a broken connection fails (no
 * offline queue). Errors surface on the commands that meet them: the connection's
 * own error event would otherwise crash the worker.
 */
export function lazyRedis(endpoint: RedisEndpoint, commandTimeoutMs: number): { redis: Redis; ready: () => Promise<void> } {
  const redis = honestRedis(endpoint, commandTimeoutMs);
  redis.on("error", () => {});
  let connected: Promise<void> | null = null;
  const ready = async (): Promise<void> => {
    if (redis.status === "ready") return;
    if (redis.status === "wait") connected ??= redis.connect();
    await connected;
  };
  return { redis, ready };
}

export class RedisLock implements LockClient {
  private readonly redis: Redis;
  private readonly ready: () => Promise<void>;
  private holds = 0;

  constructor(private readonly opts: RedisLockOptions) {
    ({ redis: this.redis, ready: this.ready } = lazyRedis(opts.endpoint, opts.commandTimeoutMs));
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const owner = `${this.opts.ownerPrefix}-h${++this.holds}`;
    return pollAcquire(async () => {
      await this.ready();
      const fence = (await this.redis.eval(ACQUIRE, 2, key, fenceKey(key), owner, ttlMs)) as number | null;
      return fence === null ? null : { type: "ok", value: { owner, fence: Number(fence), ttlMs } };
    }, timeoutMs, this.opts.rng);
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    await this.ready();
    if (this.opts.blindRenew) {
      await this.redis.set(key, hold.owner, "PX", ttlMs);
      return { type: "ok", value: { ttlMs } };
    }
    const ok = (await this.redis.eval(RENEW, 1, key, hold.owner, ttlMs)) as number;
    return ok === 1 ? { type: "ok", value: { ttlMs } } : { type: "fail", error: "not-owner" };
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    await this.ready();
    if (this.opts.unsafeRelease) {
      const current = await this.redis.get(key);
      if (current !== hold.owner) return { type: "ok", value: { released: false } };
      if (this.opts.releaseGapMs) await sleep(this.opts.releaseGapMs);
      const deleted = await this.redis.del(key);
      return { type: "ok", value: { released: deleted === 1 } };
    }
    const deleted = (await this.redis.eval(RELEASE, 1, key, hold.owner)) as number;
    return { type: "ok", value: { released: deleted === 1 } };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

/**
 * Delete a run's keys on a Redis it shares (--deploy external): its locks and
 * their fence counters, all named under `prefix`. The number deleted.
 */
export async function removeKeysUnder(endpoint: RedisEndpoint, prefix: string, timeoutMs: number): Promise<number> {
  if (prefix === "") throw new Error("refusing to delete every key: the run has no key prefix");
  const redis = honestRedis(endpoint, timeoutMs);
  redis.on("error", () => {});
  try {
    await redis.connect();
    let deleted = 0;
    for (const pattern of [`${prefix}*`, `fence:{${prefix}*`]) {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 500);
        cursor = next;
        if (keys.length) deleted += await redis.del(...keys);
      } while (cursor !== "0");
    }
    return deleted;
  } finally {
    redis.disconnect();
  }
}
