// The project's own etcd lock, on the design of Go's concurrency.Mutex (docs/backends.md,
// etcd): a lease per hold; the waiter puts `<prefix>/<key>/<lease id>` under it only
// if that key does not exist yet; it holds the lock when its key has the lowest
// create revision under the prefix, and otherwise watches the key just before its
// own until that one is deleted. Waiters are served in the order their keys were
// created (FIFO), and the create revision of the holder's key is its fence: etcd
// revisions only grow, and no two keys share one.
//
// After waiting it checks that its own key still exists: its lease may have
// expired while it waited (a paused or partitioned waiter), and Jepsen found the
// Go client granting the lock in that case. While it waits, the client keeps its
// lease alive, as Go's session does; once it holds, the lease is kept alive only
// by `renew` (the workload's watchdog, recorded as renew operations), so a hold
// without --renew lasts one TTL.
//
// Its ok value reports `queued_ms`: how long after the acquire began its put was
// answered, i.e. by when its place in the queue was certainly taken. The queue is
// FIFO by etcd's order of those puts, which two waiters in flight together may
// reach in either order; the fairness analysis (checker/fairness.ts) needs this
// to tell such a race from a waiter served out of turn.
import type { Hold, Outcome } from "./lock.ts";
import { call, EtcdCallError, errorCode, hex, keepAliveOnce, key, leaseFacts, leaseSeconds, LeaseLock, revokeQuietly, under, type LeaseHold } from "./etcd-connection.ts";

import { QUEUE_PREFIX } from "./places.ts";

export { QUEUE_PREFIX };

export class EtcdQueueLock extends LeaseLock<LeaseHold> {
  async acquire(k: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const owner = this.nextOwner();
    const began = performance.now();
    const deadline = Date.now() + timeoutMs;
    const ttlS = leaseSeconds(ttlMs);
    let leaseId: string;
    try {
      leaseId = (await call(this.client.leaseClient.leaseGrant({ TTL: ttlS }))).ID;
    } catch (err) {
      // No key was put: whatever became of the lease, nothing was locked.
      return { type: "fail", error: "no-lease", value: { cause: errorCode(err) } };
    }
    const keeper = this.keepAliveWhileWaiting(leaseId, ttlS);
    try {
      return await this.queue(k, owner, leaseId, ttlMs, deadline, timeoutMs, began);
    } catch (err) {
      // Whatever went wrong after the lease was granted, revoking it takes our key
      // out of the queue (if it was ever put): once etcd confirms, we certainly
      // hold nothing, and the acquire failed. Until then it is unknown.
      return await this.giveUp(leaseId, errorCode(err), err);
    } finally {
      keeper.stop();
    }
  }

  /** Join the queue for `k` and wait for our turn, until `deadline`. */
  private async queue(k: string, owner: string, leaseId: string, ttlMs: number, deadline: number, timeoutMs: number, began: number): Promise<Outcome<Hold>> {
    const ttlS = leaseSeconds(ttlMs);
    const prefix = `${QUEUE_PREFIX}/${k}/`;
    const myKey = `${prefix}${hex(leaseId)}`;
    // Put our key unless it exists, and read its create revision either way.
    const put = await call(
      this.client.kv.txn({
        compare: [{ key: key(myKey), target: "Create", result: "Equal", create_revision: 0 }],
        success: [{ request_put: { key: key(myKey), value: Buffer.from(owner), lease: leaseId } }, { request_range: { key: key(myKey) } }],
        failure: [{ request_range: { key: key(myKey) } }],
      }),
    );
    // Rounded up: a later place only ever counts fewer overtakes.
    const queuedMs = Math.ceil((performance.now() - began) * 1000) / 1000;
    const mine = put.responses[put.responses.length - 1].response_range.kvs[0];
    if (!mine) return this.giveUp(leaseId, "lease-expired");
    const myRev = Number(mine.create_revision);
    for (;;) {
      // One read at one revision: our key, the oldest key (the holder), and the
      // youngest key older than ours (the one we wait for).
      const q = await call(
        this.client.kv.txn({
          success: [
            { request_range: { key: key(myKey) } },
            { request_range: { ...under(prefix), sort_target: "Create", sort_order: "Ascend", limit: 1 } },
            { request_range: { ...under(prefix), sort_target: "Create", sort_order: "Descend", max_create_revision: myRev - 1, limit: 1 } },
          ],
        }),
      );
      const [own, first, before] = q.responses.map((r) => r.response_range.kvs[0]);
      // The check Jepsen's etcd lock test showed missing: a lease that expired
      // while we waited took our key with it, and the lock is not ours.
      if (!own) return this.giveUp(leaseId, "lease-expired");
      if (first && Number(first.create_revision) === myRev) {
        this.held.set(owner, { leaseId, key: myKey });
        return { type: "ok", value: { owner, fence: myRev, ttlMs: ttlS * 1000, extra: { ...leaseFacts(ttlMs, leaseId), queued_ms: queuedMs } } };
      }
      if (Date.now() >= deadline) return this.giveUp(leaseId, timeoutMs > 0 ? "timeout" : "busy");
      if (before) {
        // Re-read at least once a TTL even if the watch says nothing: a watch on a
        // member cut off from the quorum stays silent.
        const waitMs = Math.min(deadline - Date.now(), Math.max(250, ttlS * 1000));
        await this.waitDeleted(before.key, Number(q.header.revision) + 1, waitMs);
      }
    }
  }

  /** The key is gone either way; its lease only holds on to nothing now. */
  protected letGo(h: LeaseHold): Promise<void> {
    return revokeQuietly(this.client, h.leaseId);
  }

  /**
   * Leave the queue and fail with `error`: revoking the lease deletes our key with
   * it, in one step, so whoever waits behind us is told at once. If etcd does not
   * confirm the revoke, our key may still be queued (or first, holding everyone up
   * for a TTL): not a certain failure, so it throws (unknown), with `cause`'s code
   * where there is one, but never one that says nothing was sent.
   */
  private async giveUp(leaseId: string, error: string, cause?: unknown): Promise<Outcome<Hold>> {
    try {
      await call(this.client.leaseClient.leaseRevoke({ ID: leaseId }));
    } catch (err) {
      // A lease that is already gone (it expired) took our key with it: that is a certain failure too.
      if (!/requested lease not found/.test(String((err as Error)?.message))) {
        const code = errorCode(cause ?? err);
        throw new EtcdCallError(code === "conn-refused" || code === "error" ? "unavailable" : code, String((cause as Error)?.message ?? cause ?? err));
      }
    }
    return { type: "fail", error };
  }

  /** Keep-alives every TTL/3 while we wait; a failed one shows as our key gone later. */
  private keepAliveWhileWaiting(leaseId: string, ttlS: number): { stop(): void } {
    const everyMs = (ttlS * 1000) / 3;
    const timer = setInterval(() => void keepAliveOnce(this.client, leaseId, everyMs).catch(() => {}), everyMs);
    return { stop: () => clearInterval(timer) };
  }

  /** Until `k` is deleted at or after `fromRevision`, or `maxMs` passed. */
  private async waitDeleted(k: Buffer, fromRevision: number, maxMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const watcher = this.client.watch().key(k).startRevision(String(fromRevision)).only("delete").watcher();
    try {
      await new Promise<void>((resolve) => {
        timer = setTimeout(resolve, maxMs);
        watcher.on("delete", () => resolve());
        // A broken watch is reconnected by etcd3 in the background; the timer bounds
        // the wait and the caller reads again.
        watcher.on("error", () => {});
      });
    } finally {
      clearTimeout(timer);
      void watcher.cancel().catch(() => {});
    }
  }
}
