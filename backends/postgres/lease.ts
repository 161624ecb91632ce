// A lease row per lock key: owner, expiry and fence in the table fencecheck_leases
// (of the run's schema: public on the run's own server, one of the run's own on yours).
// One statement grants: it inserts the row, or updates it only if the lease
// has expired by the server's clock (clock_timestamp(), never the client's), and
// the same UPDATE increments the fence and returns it. The fence therefore
// moves exactly once per grant, in grant order, with no gaps (a nextval() would
// be ordered but not transactional). Renew and release compare the owner.
//
// What frees the lock when a holder dies or is cut off: only time. The row says
// who holds it until `expires_at` (--ttl after the grant or the last renew), and
// then the next acquire takes it, whether the holder is dead, frozen or merely
// slow: the fence is what keeps a late holder's writes out.
import type { Rng } from "../../lib/index.ts";
import { pollAcquire, type ClientContext, type Hold, type LockClient, type Outcome } from "../../clients/lock.ts";
import { PgSession, accessOf, lockTables } from "./session.ts";

/** The statements, on the lease table of the run's schema. */
function statements(leases: string): { acquire: string; renew: string; release: string } {
  return {
    acquire: `
INSERT INTO ${leases} AS l (name, owner, expires_at, fence)
VALUES ($1, $2, clock_timestamp() + $3 * interval '1 millisecond', 1)
ON CONFLICT (name) DO UPDATE
  SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at, fence = l.fence + 1
  WHERE l.expires_at < clock_timestamp()
RETURNING fence`,
    renew: `
UPDATE ${leases} SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
WHERE name = $1 AND owner = $2 AND expires_at >= clock_timestamp()`,
    // The row stays (its fence must keep counting); the lease ends now.
    release: `
UPDATE ${leases} SET owner = NULL, expires_at = clock_timestamp()
WHERE name = $1 AND owner = $2 AND expires_at >= clock_timestamp()`,
  };
}

export class PostgresLeaseLock implements LockClient {
  private readonly session: PgSession;
  private readonly rng: Rng;
  private readonly ownerPrefix: string;
  private holds = 0;
  private readonly sql: ReturnType<typeof statements>;

  constructor(ctx: ClientContext) {
    const access = accessOf(ctx);
    this.session = new PgSession(ctx.endpoints[0], ctx.commandTimeoutMs, access);
    this.sql = statements(lockTables(access.schema).leases);
    this.rng = ctx.rng;
    this.ownerPrefix = ctx.ownerPrefix;
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const owner = `${this.ownerPrefix}-h${++this.holds}`;
    // As the Redis client: a lease row offers no queue to wait in.
    return pollAcquire(async () => {
      const r = await this.session.query<{ fence: string }>(this.sql.acquire, [key, owner, ttlMs]);
      return r.rows.length ? { type: "ok", value: { owner, fence: Number(r.rows[0].fence), ttlMs } } : null;
    }, timeoutMs, this.rng);
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const r = await this.session.query(this.sql.renew, [key, hold.owner, ttlMs]);
    return r.rowCount === 1 ? { type: "ok", value: { ttlMs } } : { type: "fail", error: "not-owner" };
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const r = await this.session.query(this.sql.release, [key, hold.owner]);
    return { type: "ok", value: { released: r.rowCount === 1 } };
  }

  close(): Promise<void> {
    return this.session.close();
  }
}
