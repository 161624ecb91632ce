// The etcd3 npm package's own lock, as its users call it:
// `client.lock(key).ttl(s).acquire()` grants a lease and does one txn "put the key
// under the lease if it does not exist". There is no waiter queue (a waiter
// retries until --acquire-timeout), and no fence: the package does not return the
// revision, so the fence is the key's create_revision read after acquiring (the ok
// value says so: `fence_read_after`). A hold whose lease is gone by the time of
// that read gets no fence, and a fencing resource refuses its writes.
//
// The package keeps the lease alive in the background every TTL/3 for as long as
// the process runs (docs/backends.md, etcd), whatever --renew says; --renew adds recorded
// one-off keep-alives. A SIGSTOP freezes both, which is what lets a lease expire.
import { EtcdLockFailedError, type Lock } from "etcd3";
import type { Hold, Outcome } from "../../clients/lock.ts";
import { sleep } from "../../lib/index.ts";
import { call, classify, errorCode, key, leaseFacts, leaseSeconds, LeaseLock, type LeaseHold } from "./connection.ts";

import { LOCK_PREFIX } from "./places.ts";

export { LOCK_PREFIX };

interface Held extends LeaseHold {
  lock: Lock;
}

/**
 * Stop the package's background keep-alive of a lock without revoking its lease:
 * a hold abandoned by its process (an unknown outcome) must end with its lease,
 * as every hold does, not live on in the background until the client closes. The
 * package offers only release(), which revokes, so this reaches its lease.
 */
function stopKeepAlive(lock: Lock): void {
  (lock as unknown as { lease?: { release(): void } }).lease?.release();
}

export class Etcd3Lock extends LeaseLock<Held> {
  async acquire(k: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    // One logical client holds one lock at a time: a hold still here was abandoned.
    for (const h of this.held.values()) stopKeepAlive(h.lock);
    this.held.clear();
    const owner = this.nextOwner();
    const deadline = Date.now() + timeoutMs;
    const ttlS = leaseSeconds(ttlMs);
    const lockKey = `${LOCK_PREFIX}/${k}`;
    for (;;) {
      const lock = this.client.lock(lockKey).ttl(ttlS);
      try {
        await lock.acquire();
      } catch (err) {
        if (!(err instanceof EtcdLockFailedError)) {
          stopKeepAlive(lock);
          // No lease, no put: certainly not acquired. Otherwise the put's outcome is unknown.
          if (!(await lock.leaseId().then(() => true, () => false))) return { type: "fail", error: "no-lease", value: { cause: errorCode(err) } };
          throw classify(err);
        }
        // The txn found the key taken, and the package revoked its lease: certainly not acquired.
        if (Date.now() >= deadline) return { type: "fail", error: timeoutMs > 0 ? "timeout" : "busy" };
        await sleep(Math.min(this.ctx.rng.between(10, 40), Math.max(0, deadline - Date.now())));
        continue;
      }
      try {
        const leaseId = (await lock.leaseId())!;
        const read = await call(this.client.kv.range({ key: key(lockKey) }));
        const kv = read.kvs[0];
        const fence = kv && kv.lease === leaseId ? Number(kv.create_revision) : null;
        this.held.set(owner, { lock, leaseId, key: lockKey });
        return { type: "ok", value: { owner, fence, ttlMs: ttlS * 1000, extra: { fence_read_after: true, ...leaseFacts(ttlMs, leaseId) } } };
      } catch (err) {
        // We hold the lock but cannot say with which fence: unknown, and the hold is abandoned to its lease.
        stopKeepAlive(lock);
        throw classify(err);
      }
    }
  }

  /** The package's release revokes the lease, after the compare-and-delete has said whether the lock was still ours. */
  protected letGo(h: Held): Promise<void> {
    return h.lock.release().catch(() => stopKeepAlive(h.lock));
  }

  protected override abandon(h: Held): void {
    stopKeepAlive(h.lock);
  }

  override async close(): Promise<void> {
    for (const h of this.held.values()) stopKeepAlive(h.lock);
    this.held.clear();
    await super.close();
  }
}
