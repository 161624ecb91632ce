// redis-semaphore's locks (npm redis-semaphore 5.8, the most installed Redis lock
// on npm), used as its README says: one lock object per hold on the key, acquire
// with its own retries until acquireTimeout, its own refresh timer (every 0.8 x
// the lock timeout) while held, release. Its Mutex is here; its Semaphore and
// MultiSemaphore (redis-semaphore-counting.ts) are the same object with a count.
// It issues no fencing token (its issue #127 asks for one), so fences come from
// --fence-source. Its `onLockLost` is told when a refresh finds the hold gone; by
// default it throws from a timer, which would crash the process, so the hold
// notes it instead and the next renew says so.
//
// Its acquire takes an AbortSignal (5.8): it checks the signal before each
// attempt and wakes from the pause between attempts with the signal's reason.
// An attempt already in flight runs to its end and a grant is kept, so that
// reason means no attempt took the lock: nothing is queued (it polls), and the
// acquire certainly failed "cancelled". A grant that raced the signal is ok, and
// the workload releases it.
import { Mutex, TimeoutError, type LockOptions } from "redis-semaphore";
import type { Redis } from "ioredis";
import { honestRedis } from "./client.ts";
import type { LockAdapter } from "../../clients/adapter.ts";
import { CANCELLED, type AcquireRequest, type ClientContext, type Hold, type LockClient, type Outcome } from "../../clients/lock.ts";

/** Makes the library's lock object for one hold (a Mutex, or a Semaphore or MultiSemaphore, which extend it). */
export type MakeLibraryLock = (redis: Redis, key: string, options: LockOptions, request: AcquireRequest | undefined) => Mutex;

export class RedisSemaphoreLock implements LockClient {
  private readonly redis;
  private readonly held = new Map<string, { lock: Mutex; lost: boolean }>();

  constructor(
    private readonly ctx: ClientContext,
    private readonly make: MakeLibraryLock,
  ) {
    this.redis = honestRedis(ctx.endpoints[0], ctx.commandTimeoutMs);
    this.redis.on("error", () => {});
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number, request?: AcquireRequest): Promise<Outcome<Hold>> {
    if (this.redis.status === "wait") await this.redis.connect();
    const entry = { lock: null as unknown as Mutex, lost: false };
    entry.lock = this.make(
      this.redis,
      key,
      {
        lockTimeout: ttlMs,
        // A wait of 0 is one try. The library attempts while Date.now() is before its
        // start plus acquireTimeout, read twice: at 1 ms, a process descheduled between
        // the two reads made no attempt and reported a timeout on a free key (a fresh
        // clone's test, four files at once on two cores). So a try is one attempt,
        // with time to make it.
        ...(timeoutMs > 0 ? { acquireTimeout: timeoutMs } : { acquireTimeout: 60_000, acquireAttemptsLimit: 1 }),
        identifierSuffix: this.ctx.ownerPrefix,
        onLockLost: () => void (entry.lost = true),
      },
      request,
    );
    const signal = request?.signal;
    try {
      await entry.lock.acquire(signal);
    } catch (err) {
      // Its timeout means every attempt was refused: certainly not acquired.
      if (err instanceof TimeoutError) return { type: "fail", error: "timeout" };
      if (signal?.aborted && err === signal.reason) return { type: "fail", error: CANCELLED };
      throw err;
    }
    this.held.set(entry.lock.identifier, entry);
    return { type: "ok", value: { owner: entry.lock.identifier, fence: null, ttlMs } };
  }

  /** The library refreshes by itself; a renew asks it to refresh now, with its own script. */
  async renew(_key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const entry = this.held.get(hold.owner);
    if (!entry || entry.lost) return { type: "fail", error: "not-owner" };
    const refreshed = await (entry.lock as unknown as { _refresh(): Promise<boolean> })._refresh();
    return refreshed ? { type: "ok", value: { ttlMs } } : { type: "fail", error: "not-owner" };
  }

  /** Its release deletes its entry only if it is still there; it does not say whether it was. */
  async release(_key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const entry = this.held.get(hold.owner);
    if (!entry) return { type: "ok", value: { released: false } };
    this.held.delete(hold.owner);
    const believed = entry.lock.isAcquired;
    await entry.lock.release();
    return { type: "ok", value: { released: believed } };
  }

  async close(): Promise<void> {
    for (const { lock } of this.held.values()) lock.stopRefresh();
    this.redis.disconnect();
  }
}

/** An adapter but for its one-line description, which the registry (index.ts) holds. */
export const redisSemaphore: Omit<LockAdapter, "describe"> = {
  backends: ["redis"],
  fences: false,
  create: (ctx) => new RedisSemaphoreLock(ctx, (redis, key, options) => new Mutex(redis, key, options)),
};
