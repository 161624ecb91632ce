// redis-semaphore's Mutex (npm redis-semaphore 5.8, the most installed Redis lock
// on npm), used as its README says: a Mutex per hold on the key, acquire with its
// own retries until acquireTimeout, its own refresh timer (every 0.8 x the lock
// timeout) while held, release. It issues no fencing token (its issue #127 asks
// for one), so fences come from --fence-source. Its `onLockLost` is told when a
// refresh finds the key gone; by default it throws from a timer, which would
// crash the process, so the hold notes it instead and the next renew says so.
import { Mutex, TimeoutError } from "redis-semaphore";
import { honestRedis } from "./redis.ts";
import type { LockAdapter } from "./adapter.ts";
import type { ClientContext, Hold, LockClient, Outcome } from "./lock.ts";

class RedisSemaphoreMutex implements LockClient {
  private readonly redis;
  private readonly held = new Map<string, { mutex: Mutex; lost: boolean }>();

  constructor(private readonly ctx: ClientContext) {
    this.redis = honestRedis(ctx.endpoints[0], ctx.commandTimeoutMs);
    this.redis.on("error", () => {});
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    if (this.redis.status === "wait") await this.redis.connect();
    const entry = { mutex: null as unknown as Mutex, lost: false };
    entry.mutex = new Mutex(this.redis, key, {
      lockTimeout: ttlMs,
      acquireTimeout: Math.max(1, timeoutMs),
      identifierSuffix: this.ctx.ownerPrefix,
      onLockLost: () => void (entry.lost = true),
    });
    try {
      await entry.mutex.acquire();
    } catch (err) {
      // Its timeout means every attempt was refused: certainly not acquired.
      if (err instanceof TimeoutError) return { type: "fail", error: "timeout" };
      throw err;
    }
    this.held.set(entry.mutex.identifier, entry);
    return { type: "ok", value: { owner: entry.mutex.identifier, fence: null, ttlMs } };
  }

  /** The library refreshes by itself; a renew asks it to refresh now, with its own script. */
  async renew(_key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const entry = this.held.get(hold.owner);
    if (!entry || entry.lost) return { type: "fail", error: "not-owner" };
    const refreshed = await (entry.mutex as unknown as { _refresh(): Promise<boolean> })._refresh();
    return refreshed ? { type: "ok", value: { ttlMs } } : { type: "fail", error: "not-owner" };
  }

  /** Its release deletes the key only if it still holds this identifier; it does not say whether it did. */
  async release(_key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const entry = this.held.get(hold.owner);
    if (!entry) return { type: "ok", value: { released: false } };
    this.held.delete(hold.owner);
    const believed = entry.mutex.isAcquired;
    await entry.mutex.release();
    return { type: "ok", value: { released: believed } };
  }

  async close(): Promise<void> {
    for (const { mutex } of this.held.values()) mutex.stopRefresh();
    this.redis.disconnect();
  }
}

/** An adapter but for its one-line description, which the registry (index.ts) holds. */
export const redisSemaphore: Omit<LockAdapter, "describe"> = {
  backends: ["redis"],
  fences: false,
  create: (ctx) => new RedisSemaphoreMutex(ctx),
};
