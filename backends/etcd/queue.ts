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
// to tell such a race from a waiter served out of turn. Its ok and fail values
// name, as `behind`, the owner of the key it last waited behind (a key's value is
// its owner), so the checker can name a dead waiter that stalled the queue.
//
// Cancellation (request.signal): a waiter called off while it waits revokes its
// lease, which deletes its key in the same step; once etcd confirms, the acquire
// certainly failed ("cancelled"). A revoke with no answer leaves it unknown
// ("cancel-unknown"): the key may stay queued, holding up everyone behind it,
// until its lease expires, at most one TTL after the waiter's keep-alives stopped.
// etcd-queue-cancel-delete withdraws with a delete of its key instead (as Go's
// Mutex does when its context is cancelled), kept for the scenario of a lost delete.
//
// Which keys a waiter waits behind is `place`'s business: every older key under
// the lock's prefix here; etcd-rw (etcd-rw.ts) puts readers and writers in one queue.
import { CANCEL_UNKNOWN, CANCELLED, UnknownOutcome, type AcquireRequest, type ClientContext, type Hold, type Outcome } from "../../clients/lock.ts";
import { call, EtcdCallError, errorCode, hex, keepAliveOnce, key, leaseFacts, leaseSeconds, LeaseLock, revokeQuietly, under, type LeaseHold } from "./connection.ts";

import { QUEUE_PREFIX } from "./places.ts";

export { QUEUE_PREFIX };

/** Where an acquire's key goes, and the keys older than it that it waits behind: those under `after`. */
export interface Place {
  key: string;
  after: string;
}

/** One acquire's wait: what it asked, its lease and key, and whom it last waited behind. */
interface Wait {
  k: string;
  owner: string;
  leaseId: string;
  place: Place;
  ttlMs: number;
  deadline: number;
  timeoutMs: number;
  began: number;
  signal?: AbortSignal;
  behind?: string;
}

/** How a cancelled waiter takes its key out: with its lease (one step), or by deleting the key alone. */
export type Withdraw = "revoke" | "delete";

export class EtcdQueueLock extends LeaseLock<LeaseHold> {
  constructor(ctx: ClientContext, private readonly withdrawBy: Withdraw = "revoke") {
    super(ctx);
  }

  /** A FIFO mutex: each key waits behind every older key of the lock. */
  protected place(k: string, lease: string, _request?: AcquireRequest): Place {
    const prefix = `${QUEUE_PREFIX}/${k}/`;
    return { key: `${prefix}${lease}`, after: prefix };
  }

  async acquire(k: string, ttlMs: number, timeoutMs: number, request?: AcquireRequest): Promise<Outcome<Hold>> {
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
    const w: Wait = { k, owner, leaseId, place: this.place(k, hex(leaseId), request), ttlMs, deadline, timeoutMs, began, signal: request?.signal };
    const keeper = this.keepAliveWhileWaiting(leaseId, ttlS);
    try {
      return await this.queue(w);
    } catch (err) {
      if (err instanceof UnknownOutcome) throw err;
      // Called off meanwhile: what the caller must hear of is whether the withdrawal took.
      if (w.signal?.aborted) return await this.withdraw(w);
      // Whatever went wrong after the lease was granted, revoking it takes our key
      // out of the queue (if it was ever put): once etcd confirms, we certainly
      // hold nothing, and the acquire failed. Until then it is unknown.
      return await this.giveUp(w, errorCode(err), err);
    } finally {
      keeper.stop();
    }
  }

  /** Join the queue for `k` and wait for our turn, until the deadline or the signal. */
  private async queue(w: Wait): Promise<Outcome<Hold>> {
    const ttlS = leaseSeconds(w.ttlMs);
    const myKey = w.place.key;
    if (w.signal?.aborted) return this.withdraw(w);
    // Put our key unless it exists, and read its create revision either way.
    const put = await call(
      this.client.kv.txn({
        compare: [{ key: key(myKey), target: "Create", result: "Equal", create_revision: 0 }],
        success: [{ request_put: { key: key(myKey), value: Buffer.from(w.owner), lease: w.leaseId } }, { request_range: { key: key(myKey) } }],
        failure: [{ request_range: { key: key(myKey) } }],
      }),
    );
    // Rounded up: a later place only ever counts fewer overtakes.
    const queuedMs = Math.ceil((performance.now() - w.began) * 1000) / 1000;
    const mine = put.responses[put.responses.length - 1].response_range.kvs[0];
    if (!mine) return this.giveUp(w, "lease-expired");
    const myRev = Number(mine.create_revision);
    for (;;) {
      // One read at one revision: our key, and the youngest key older than ours
      // that we wait behind (none: the lock is ours).
      const q = await call(
        this.client.kv.txn({
          success: [
            { request_range: { key: key(myKey) } },
            { request_range: { ...under(w.place.after), sort_target: "Create", sort_order: "Descend", max_create_revision: myRev - 1, limit: 1 } },
          ],
        }),
      );
      const [own, before] = q.responses.map((r) => r.response_range.kvs[0]);
      // The check Jepsen's etcd lock test showed missing: a lease that expired
      // while we waited took our key with it, and the lock is not ours.
      if (!own) return this.giveUp(w, "lease-expired");
      if (!before) {
        this.held.set(w.owner, { leaseId: w.leaseId, key: myKey });
        const extra = { ...leaseFacts(w.ttlMs, w.leaseId), queued_ms: queuedMs, ...this.behind(w) };
        return { type: "ok", value: { owner: w.owner, fence: myRev, ttlMs: ttlS * 1000, extra } };
      }
      w.behind = before.value.toString();
      if (w.signal?.aborted) return this.withdraw(w);
      if (Date.now() >= w.deadline) return this.giveUp(w, w.timeoutMs > 0 ? "timeout" : "busy");
      // Re-read at least once a TTL even if the watch says nothing: a watch on a
      // member cut off from the quorum stays silent.
      const waitMs = Math.min(w.deadline - Date.now(), Math.max(250, ttlS * 1000));
      await this.waitDeleted(before.key, Number(q.header.revision) + 1, waitMs, w.signal);
    }
  }

  /** The facts of an acquire's ok or fail value about whom it waited behind. */
  private behind(w: Wait): { behind?: string } {
    return w.behind === undefined ? {} : { behind: w.behind };
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
  private async giveUp(w: Wait, error: string, cause?: unknown): Promise<Outcome<Hold>> {
    const behind = this.behind(w);
    try {
      await call(this.client.leaseClient.leaseRevoke({ ID: w.leaseId }));
    } catch (err) {
      if (!leaseGone(err)) {
        const code = errorCode(cause ?? err);
        throw new EtcdCallError(code === "conn-refused" || code === "error" ? "unavailable" : code, String((cause as Error)?.message ?? cause ?? err));
      }
    }
    return behind.behind === undefined ? { type: "fail", error } : { type: "fail", error, value: behind };
  }

  /**
   * Called off while waiting: take our key out of the queue, with its lease or
   * (withdrawBy "delete") alone. Confirmed, the waiter is certainly gone; with no
   * answer it may still be queued until its lease expires (the keep-alives stop
   * as the acquire returns), which the caller cannot know: cancel-unknown.
   */
  private async withdraw(w: Wait): Promise<Outcome<Hold>> {
    try {
      if (this.withdrawBy === "delete") await call(this.client.kv.deleteRange({ key: key(w.place.key) }));
      else await call(this.client.leaseClient.leaseRevoke({ ID: w.leaseId }));
    } catch (err) {
      if (!leaseGone(err)) throw new UnknownOutcome(CANCEL_UNKNOWN, `the ${this.withdrawBy} of ${w.place.key} got no answer: ${(err as Error)?.message ?? err}`);
    }
    return { type: "fail", error: CANCELLED, value: { owner: w.owner, ...this.behind(w) } };
  }

  /** Keep-alives every TTL/3 while we wait; a failed one shows as our key gone later. */
  private keepAliveWhileWaiting(leaseId: string, ttlS: number): { stop(): void } {
    const everyMs = (ttlS * 1000) / 3;
    const timer = setInterval(() => void keepAliveOnce(this.client, leaseId, everyMs).catch(() => {}), everyMs);
    return { stop: () => clearInterval(timer) };
  }

  /** Until `k` is deleted at or after `fromRevision`, `maxMs` passed, or `signal` aborts. */
  private async waitDeleted(k: Buffer, fromRevision: number, maxMs: number, signal?: AbortSignal): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const watcher = this.client.watch().key(k).startRevision(String(fromRevision)).only("delete").watcher();
    try {
      await new Promise<void>((resolve) => {
        timer = setTimeout(resolve, maxMs);
        watcher.on("delete", () => resolve());
        // A broken watch is reconnected by etcd3 in the background; the timer bounds
        // the wait and the caller reads again.
        watcher.on("error", () => {});
        onAbort = () => resolve();
        signal?.addEventListener("abort", onAbort);
        if (signal?.aborted) resolve();
      });
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener("abort", onAbort);
      void watcher.cancel().catch(() => {});
    }
  }
}

/** A lease that is already gone (it expired, or a revoke whose answer was lost took) took our key with it. */
const leaseGone = (err: unknown): boolean => /requested lease not found/.test(String((err as Error)?.message));
