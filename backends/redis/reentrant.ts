// A reentrant Redis lock in the layout of Redisson's RLock (redis-reentrant-scripts.ts):
// a hash of owner -> hold count under a PEXPIRE lease, one Lua script per step.
// A re-entry is an acquire that names its outer hold (AcquireRequest.reenter): it
// keeps that hold's owner, raises the count and, as Redisson does, refreshes the
// lease. Its fence is the outer hold's (the fence counter moves only when the lock
// goes from free to held, Hazelcast FencedLock's promise) or a new INCR at every
// acquire (Redisson's RFencedLock), as the client's kind says. Only the release
// that brings the count to 0 frees the lock.
import { Redis } from "ioredis";
import type { AcquireRequest, ClientContext, Hold, LockClient, Outcome } from "../../clients/lock.ts";
import { fenceKey, lazyRedis } from "./client.ts";
import { pollUntilCancelled } from "../../clients/poll-cancel.ts";
import { ACQUIRE, BUSY, NOT_OWNER, RELEASE, RENEW } from "./reentrant-scripts.ts";

export interface RedisReentrantOptions {
  /** What a re-entry's fence is: the outer hold's ("same") or a new INCR ("new"). */
  fenceOnReentry: "same" | "new";
  /**
   * Kept on purpose: release deletes the hash whatever the count, so the inner
   * release frees the lock under the outer hold.
   */
  unsafeRelease?: boolean;
  /**
   * Kept on purpose (false): a re-entry leaves the lease as it was, so a hold that
   * re-enters late counts on a lease that ends at the outer acquire's TTL.
   */
  refreshOnReentry?: boolean;
}

const flag = (b: boolean): string => (b ? "1" : "0");

export class RedisReentrantLock implements LockClient {
  private readonly redis: Redis;
  private readonly ready: () => Promise<void>;
  private holds = 0;

  constructor(
    private readonly ctx: ClientContext,
    private readonly opts: RedisReentrantOptions,
  ) {
    ({ redis: this.redis, ready: this.ready } = lazyRedis(ctx.endpoints[0], ctx.commandTimeoutMs));
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number, request?: AcquireRequest): Promise<Outcome<Hold>> {
    const outer = request?.reenter;
    const owner = outer?.owner ?? `${this.ctx.ownerPrefix}-h${++this.holds}`;
    const tryOnce = async (): Promise<Outcome<Hold> | null> => {
      await this.ready();
      const args = [owner, ttlMs, flag(outer !== undefined), flag(this.opts.fenceOnReentry === "new"), flag(this.opts.refreshOnReentry ?? true)];
      const got = Number(await this.redis.eval(ACQUIRE, 2, key, fenceKey(key), ...args));
      if (got === BUSY) return null;
      // A re-entry whose outer hold is gone (its lease ran out): it can never become ours by waiting.
      if (got === NOT_OWNER) return { type: "fail", error: "not-owner" };
      return { type: "ok", value: { owner, fence: got, ttlMs } };
    };
    // A re-entry is answered at once: the lock is its owner's, or it is lost.
    if (outer) return (await tryOnce()) ?? { type: "fail", error: "not-owner" };
    return pollUntilCancelled(tryOnce, timeoutMs, this.ctx.rng, request?.signal);
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    await this.ready();
    const ok = Number(await this.redis.eval(RENEW, 1, key, hold.owner, ttlMs));
    return ok === 1 ? { type: "ok", value: { ttlMs } } : { type: "fail", error: "not-owner" };
  }

  /** `released`: the owner's count went down by one; the lock is free once the outermost hold's release brings it to 0. */
  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    await this.ready();
    const left = Number(await this.redis.eval(RELEASE, 1, key, hold.owner, flag(this.opts.unsafeRelease ?? false)));
    return left === NOT_OWNER ? { type: "fail", error: "not-owner" } : { type: "ok", value: { released: true } };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
