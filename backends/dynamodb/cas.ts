// The comparison of lock services' DynamoDB recipe: one conditional write grants.
// An item per lock key holds its owner, the lease's end and a fence. An acquire
// is one UpdateItem that sets the owner and the lease only if nobody holds the
// lock or the lease has run out, and ADDs one to the fence in the same write;
// ALL_NEW hands back the fence it made. The fence stays in the item for good (a
// release removes the owner only, never the item), so it counts every grant.
//
// The lease's end is written and compared in the CLIENT's wall clock
// (Date.now()): DynamoDB keeps no time for anyone (its TTL deletes items days
// late, and dynalite has none). A client whose clock runs ahead takes a lease
// that is still running for its holder: kept on purpose, it is the recipe.
import { pollAcquire, type Hold, type LockClient, type Outcome } from "../../clients/lock.ts";
import { LockTableClient, notOwner } from "./connection.ts";

export class DynamoCasLock extends LockTableClient implements LockClient {
  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const owner = this.newOwner();
    // No queue to wait in: poll, as for a Redis or Postgres lease.
    return pollAcquire(async () => {
      const now = Date.now();
      const r = await this.items.update(key, {
        update: "SET #owner = :me, #leaseUntil = :until ADD #fence :one",
        condition: "attribute_not_exists(#owner) OR #leaseUntil < :now",
        values: { ":me": owner, ":until": now + ttlMs, ":now": now, ":one": 1 },
      });
      if (r.ok) return { type: "ok", value: { owner, fence: Number(r.out.fence), ttlMs } };
      return r.error === "condition-failed" ? null : { type: "fail", error: r.error };
    }, timeoutMs, this.rng);
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const r = await this.items.update(key, { update: "SET #leaseUntil = :until", condition: "#owner = :me", values: { ":me": hold.owner, ":until": Date.now() + ttlMs } });
    return r.ok ? { type: "ok", value: { ttlMs } } : notOwner(r.error);
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const r = await this.items.update(key, { update: "REMOVE #owner, #leaseUntil", condition: "#owner = :me", values: { ":me": hold.owner } });
    return r.ok ? { type: "ok", value: { released: true } } : notOwner(r.error);
  }
}
