// A lease row per lock key on InnoDB: owner, expiry and fence in
// fencecheck_leases (of the run's database). The row is made once per key
// (INSERT IGNORE: a second one does nothing), and one UPDATE grants: it takes
// the row only if it is free or its lease has expired by the server's clock
// (UTC_TIMESTAMP(6), never the client's; not NOW(6), which is in the session's
// time zone and jumps at a daylight-saving change), and increments the fence in
// the same statement. MariaDB 10.11 has no UPDATE ... RETURNING: the fence is
// LAST_INSERT_ID(fence + 1), which the statement's own OK packet carries
// (insertId), and affectedRows says whether it granted (the connections are
// made without CLIENT_FOUND_ROWS, so it counts rows changed). Not one INSERT
// ... ON DUPLICATE KEY UPDATE as Postgres' ON CONFLICT: its affectedRows cannot
// tell a refused grant from an insert, and a LAST_INSERT_ID() in its VALUES runs
// even when the update is refused. The fence therefore moves exactly once per
// grant, in grant order, with no gaps. Renew and release compare the owner.
//
// What frees the lock when a holder dies or is cut off: only time, as for
// postgres-lease. The row names its holder until expires_at, and then the next
// acquire takes it, whether the holder is dead, frozen or merely slow: the
// fence is what keeps a late holder's writes out.
import type { ResultSetHeader } from "mysql2";
import type { Rng } from "../../lib/index.ts";
import { pollAcquire, type ClientContext, type Hold, type LockClient, type Outcome } from "../../clients/lock.ts";
import { MariadbSession, accessOf, lockTables } from "./session.ts";

/** The statements, on the lease table of the run's database (a TTL in microseconds). */
function statements(leases: string): { make: string; acquire: string; renew: string; release: string } {
  return {
    make: `INSERT IGNORE INTO ${leases} (name, owner, expires_at, fence) VALUES (?, NULL, '1970-01-01 00:00:01', 0)`,
    // An UPDATE that waited for another's row lock compares with its own start
    // time: it may refuse a lease that expired while it waited (the client polls
    // again), and never grants one that had not expired.
    acquire: `
UPDATE ${leases} SET owner = ?, fence = LAST_INSERT_ID(fence + 1), expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
WHERE name = ? AND (owner IS NULL OR expires_at < UTC_TIMESTAMP(6))`,
    renew: `
UPDATE ${leases} SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
WHERE name = ? AND owner = ? AND expires_at >= UTC_TIMESTAMP(6)`,
    // The row stays (its fence must keep counting); the lease ends now.
    release: `
UPDATE ${leases} SET owner = NULL, expires_at = UTC_TIMESTAMP(6)
WHERE name = ? AND owner = ? AND expires_at >= UTC_TIMESTAMP(6)`,
  };
}

export class MariadbLeaseLock implements LockClient {
  private readonly session: MariadbSession;
  private readonly rng: Rng;
  private readonly ownerPrefix: string;
  private holds = 0;
  private readonly sql: ReturnType<typeof statements>;
  /** The keys whose row this client has made (or found made). */
  private readonly made = new Set<string>();

  constructor(ctx: ClientContext) {
    const access = accessOf(ctx);
    this.session = new MariadbSession(ctx.endpoints[0], ctx.commandTimeoutMs, access);
    this.sql = statements(lockTables(access.database).leases);
    this.rng = ctx.rng;
    this.ownerPrefix = ctx.ownerPrefix;
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const owner = `${this.ownerPrefix}-h${++this.holds}`;
    if (!this.made.has(key)) {
      await this.session.query(this.sql.make, [key]);
      this.made.add(key);
    }
    // As the Redis client: a lease row offers no queue to wait in.
    return pollAcquire(async () => {
      const r = await this.session.query<ResultSetHeader>(this.sql.acquire, [owner, ttlMs * 1000, key]);
      return r.affectedRows === 1 ? { type: "ok", value: { owner, fence: Number(r.insertId), ttlMs } } : null;
    }, timeoutMs, this.rng);
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const r = await this.session.query<ResultSetHeader>(this.sql.renew, [ttlMs * 1000, key, hold.owner]);
    return r.affectedRows === 1 ? { type: "ok", value: { ttlMs } } : { type: "fail", error: "not-owner" };
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const r = await this.session.query<ResultSetHeader>(this.sql.release, [key, hold.owner]);
    return { type: "ok", value: { released: r.affectedRows === 1 } };
  }

  close(): Promise<void> {
    return this.session.close();
  }
}
