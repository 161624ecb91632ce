// The algorithm of AWS's DynamoDB Lock Client (Java), which never compares
// clocks. The item of a held lock names its owner, its lease's length and a
// record version number (rvn): a random id its holder writes at the grant and
// writes anew at every heartbeat. A waiter that finds the lock held notes the
// rvn and when it saw it (by its own monotonic clock) and keeps reading; only
// if the same rvn is still there a whole lease later, the holder has certainly
// not heartbeated for a lease, and the waiter takes the lock over with a write
// conditional on that rvn. A new rvn starts the wait again.
//
// The Java client issues no fencing token (its issue #1 asks for one). Here the
// grant ADDs one to a fence in the same conditional write, and the item keeps it
// through releases, so every hold has one that rises per grant.
//
// A heartbeat's reply may be lost after DynamoDB applied it: the item then has a
// new rvn the holder never learnt. The holder keeps its old one, as the Java and
// Go libraries do (dynamolock #280), so its next heartbeat fails its condition
// and it learns, honestly late, that it no longer holds the lock.
import { randomUUID } from "node:crypto";
import { sleep, type Rng } from "../../lib/index.ts";
import { UnknownOutcome, type Hold, type LockClient, type Outcome } from "../../clients/lock.ts";
import { LockTableClient, notOwner, type LockItem } from "./connection.ts";

/** How long a waiter sleeps between reads: a tenth to a twentieth of the lease, so a release is seen soon. */
const pollMs = (leaseMs: number, rng: Rng): number => Math.max(2, rng.between(leaseMs / 20, leaseMs / 10));

/** A waiter's view of a held lock: the rvn it saw, since when by its monotonic clock, and the holder's lease. */
export interface Sighting {
  rvn: string;
  since: number;
  leaseMs: number;
}

/**
 * What a waiter does with the item it just read at `now`: grant a free lock,
 * take over one whose rvn has not moved for a whole lease, or (re)start waiting.
 */
export function nextStep(item: LockItem | null, seen: Sighting | null, now: number): { grant: "free" } | { grant: "takeover"; rvn: string } | { wait: Sighting } {
  if (!item || item.owner === undefined) return { grant: "free" };
  const rvn = String(item.rvn);
  if (seen?.rvn !== rvn) return { wait: { rvn, since: now, leaseMs: Number(item.leaseMs) || 0 } };
  return now - seen.since >= seen.leaseMs ? { grant: "takeover", rvn } : { wait: seen };
}

export class DynamoRvnLock extends LockTableClient implements LockClient {
  readonly renews = true;
  /** Each hold's rvn as its holder knows it: the last one it wrote and heard back. */
  private readonly rvns = new Map<string, string>();

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const owner = this.newOwner();
    const deadline = performance.now() + timeoutMs;
    let seen: Sighting | null = null;
    for (;;) {
      // A read changes nothing, and every write this acquire sent so far was
      // refused: a read without an answer leaves it certainly not granted.
      const read = await this.items.read(key).catch((err: unknown) => {
        if (err instanceof UnknownOutcome) return { ok: false as const, error: err.error };
        throw err;
      });
      if (!read.ok) return { type: "fail", error: read.error };
      const step = nextStep(read.out, seen, performance.now());
      if ("grant" in step) {
        const rvn = randomUUID();
        const r = await this.items.update(key, {
          update: "SET #owner = :me, #rvn = :rvn, #leaseMs = :lease ADD #fence :one",
          condition: step.grant === "free" ? "attribute_not_exists(#owner)" : "#rvn = :seen",
          values: { ":me": owner, ":rvn": rvn, ":lease": ttlMs, ":one": 1, ...(step.grant === "takeover" ? { ":seen": step.rvn } : {}) },
        });
        if (r.ok) {
          this.rvns.set(owner, rvn);
          return { type: "ok", value: { owner, fence: Number(r.out.fence), ttlMs } };
        }
        // Someone else was granted it first: read again, and wait on their rvn.
        if (r.error !== "condition-failed") return { type: "fail", error: r.error };
        seen = null;
      } else seen = step.wait;
      const left = deadline - performance.now();
      if (left <= 0) return { type: "fail", error: timeoutMs > 0 ? "timeout" : "busy" };
      // Not past the moment the takeover becomes due, nor past the deadline.
      const due = seen ? seen.since + seen.leaseMs - performance.now() : Infinity;
      await sleep(Math.min(pollMs(ttlMs, this.rng), Math.max(0, due), left));
    }
  }

  /** The heartbeat: a new rvn, written only over the one this holder last heard back. */
  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const mine = this.rvns.get(hold.owner);
    if (mine === undefined) return { type: "fail", error: "not-owner" };
    const next = randomUUID();
    // If this throws (a lost reply), the item may hold `next` while we keep `mine`.
    const r = await this.items.update(key, { update: "SET #rvn = :next, #leaseMs = :lease", condition: "#rvn = :mine AND #owner = :me", values: { ":next": next, ":lease": ttlMs, ":mine": mine, ":me": hold.owner } });
    if (!r.ok) return notOwner(r.error);
    this.rvns.set(hold.owner, next);
    return { type: "ok", value: { ttlMs } };
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const mine = this.rvns.get(hold.owner);
    if (mine === undefined) return { type: "fail", error: "not-owner" };
    // The item and its fence stay; the rvn too (a waiter that saw it finds the owner gone and grants itself the lock).
    const r = await this.items.update(key, { update: "REMOVE #owner", condition: "#rvn = :mine AND #owner = :me", values: { ":mine": mine, ":me": hold.owner } }).finally(() => this.rvns.delete(hold.owner));
    return r.ok ? { type: "ok", value: { released: true } } : notOwner(r.error);
  }
}
