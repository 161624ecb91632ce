// mariadb-get-lock: a named lock (GET_LOCK) on a connection of the client's own,
// the counterpart of postgres-advisory. Waiters wait in the server's
// metadata-lock manager, GET_LOCK(name, timeout) bounded by the acquire timeout
// (fractional seconds). Once granted, one statement on the same session records
// the grant in fencecheck_named and increments the name's fence there
// (fence = LAST_INSERT_ID(fence + 1), whose value the statement's OK packet
// carries): only the holder runs it, so fences follow grants.
//
// What frees the lock: RELEASE_LOCK, or the end of its session, and nothing else
// (not COMMIT, not ROLLBACK). A client process that dies closes its socket and
// the server ends the session at once, and so does a link reset under it
// (scenario N1). A holder that is frozen or silently cut off keeps its session,
// and its lock, until the server ends it for idleness: wait_timeout, 8 hours by
// default. So the client sets its session's wait_timeout to --ttl in whole
// seconds (rounded up) before it asks: the lock becomes a lease of ceil(--ttl)
// from the last statement (a renew is one), as postgres-advisory's
// idle_session_timeout makes its lock (scenario N2). An idle client loses its
// session the same way, and makes a new one at its next acquire.
//
// GET_LOCK is re-entrant per session and counted (MariaDB 10.0.2 and later:
// each GET_LOCK of a name the session holds needs a RELEASE_LOCK of its own). A
// re-entry (AcquireRequest.reenter) is exactly that: GET_LOCK again on the
// session of the outer hold, taken only if that session holds the name still,
// with the outer hold's owner and fence (the counter moves on grants of a free
// lock only). Any other acquire never asks on a session that may hold the
// name: a statement whose outcome is unknown drops its session (the lock goes
// with it once the server sees the connection closed).
//
// Lock names: the key itself when it has at most 64 bytes, else its SHA-256 in
// hex. MariaDB takes names of up to 192 bytes (MySQL 64 characters) and, unlike
// what its documentation says, compares them byte for byte (measured on
// 10.11.19 with the server's default collation and with utf8mb4_bin: 'Abc' and
// 'abc' are two locks); keys differ in bytes, so their locks do too.
import { createHash } from "node:crypto";
import type { ResultSetHeader } from "mysql2";
import type { AcquireRequest, ClientContext, Hold, LockClient, Outcome } from "../../clients/lock.ts";
import { MariadbSession, NOT_SENT, accessOf, answeredWithError, errnoOf, lockTables } from "./session.ts";

export function lockName(key: string): string {
  return Buffer.byteLength(key, "utf8") <= 64 ? key : createHash("sha256").update(key, "utf8").digest("hex");
}

/** wait_timeout for a TTL: whole seconds, at least 1. */
export const waitTimeoutS = (ttlMs: number): number => Math.max(1, Math.ceil(ttlMs / 1000));

const SQL = {
  waitTimeout: "SET SESSION wait_timeout = ?",
  getLock: "SELECT GET_LOCK(?, ?) AS got",
  // Only on the session that holds the name: on any other, GET_LOCK(name, 0) of a free lock would be a new grant.
  reenter: "SELECT IF(IS_USED_LOCK(?) = CONNECTION_ID(), GET_LOCK(?, 0), NULL) AS got",
  held: "SELECT IS_USED_LOCK(?) = CONNECTION_ID() AS mine",
  release: "SELECT RELEASE_LOCK(?) AS released",
} as const;

/** The grant's record and fence, on the counter table of the run's database. */
export const grantSql = (named: string): string => `
INSERT INTO ${named} (name, owner, granted_at, connection_id, fence) VALUES (?, ?, UTC_TIMESTAMP(6), CONNECTION_ID(), LAST_INSERT_ID(1))
ON DUPLICATE KEY UPDATE owner = VALUES(owner), granted_at = VALUES(granted_at), connection_id = VALUES(connection_id), fence = LAST_INSERT_ID(fence + 1)`;

/** ER_LOCK_DEADLOCK: GET_LOCK's deadlock detection answered (two sessions each waiting for what the other holds). */
const ER_LOCK_DEADLOCK = 1213;

interface NamedHold extends Hold {
  extra: { session: number; connection_id: number | null; lock_name: string };
}

export class MariadbGetLock implements LockClient {
  private readonly session: MariadbSession;
  private readonly ownerPrefix: string;
  private readonly commandTimeoutMs: number;
  private holds = 0;
  private readonly grant: string;
  /** The wait_timeout set on the current session, and its generation. */
  private waitTimeout: { generation: number; s: number } | null = null;

  constructor(ctx: ClientContext) {
    const access = accessOf(ctx);
    this.session = new MariadbSession(ctx.endpoints[0], ctx.commandTimeoutMs, access);
    this.grant = grantSql(lockTables(access.database).named);
    this.ownerPrefix = ctx.ownerPrefix;
    this.commandTimeoutMs = ctx.commandTimeoutMs;
  }

  /** The session to ask on, its wait_timeout set to the TTL (once per session and TTL): its generation. */
  private async leased(ttlMs: number): Promise<number> {
    const s = waitTimeoutS(ttlMs);
    const generation = await this.session.open();
    if (this.waitTimeout?.generation === generation && this.waitTimeout.s === s) return generation;
    await this.session.query(SQL.waitTimeout, [s]);
    // The SET may have been sent again on a new session (the old one closed unsent).
    this.waitTimeout = { generation: this.session.generation, s };
    return this.session.generation;
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number, request?: AcquireRequest): Promise<Outcome<Hold>> {
    if (request?.reenter) return this.reenter(key, request.reenter as NamedHold, ttlMs);
    const owner = `${this.ownerPrefix}-h${++this.holds}`;
    const name = lockName(key);
    const generation = await this.leased(ttlMs);
    let got: number | null;
    try {
      const rows = await this.session.query<Array<{ got: number | null }>>(SQL.getLock, [name, timeoutMs / 1000], { session: generation, timeoutMs: timeoutMs + this.commandTimeoutMs });
      got = rows[0].got;
    } catch (err) {
      if (answeredWithError(err) && errnoOf(err) === ER_LOCK_DEADLOCK) return { type: "fail", error: "deadlock" };
      // The session that should have asked was gone before it was sent: nothing asked.
      if ((err as { code?: string }).code === NOT_SENT) return { type: "fail", error: "session-ended" };
      throw err;
    }
    // 0: the wait ran out. NULL: interrupted (KILL QUERY, max_statement_time). Not taken either way.
    if (got === 0) return { type: "fail", error: timeoutMs > 0 ? "timeout" : "busy" };
    if (got !== 1) return { type: "fail", error: "interrupted" };
    try {
      const r = await this.session.query<ResultSetHeader>(this.grant, [key, owner], { session: generation });
      const hold: NamedHold = { owner, fence: Number(r.insertId), ttlMs, extra: { session: generation, connection_id: this.session.connectionId, lock_name: name } };
      return { type: "ok", value: hold };
    } catch (err) {
      // The session closed before the grant statement was sent (frozen past
      // wait_timeout right after the grant): the server ended it, and the lock
      // went with it. Nothing of ours ran; no fence was issued.
      if (this.session.closedWhileIdle(generation) || (err as { code?: string }).code === NOT_SENT) return { type: "fail", error: "session-ended" };
      // Locked but not recorded: the session goes, and its lock with it, or the
      // next acquire on it would be granted at once (re-entrant).
      await this.session.close();
      throw err;
    }
  }

  /** GET_LOCK again on the outer hold's session, if it holds the name still: the same owner and fence. */
  private async reenter(key: string, outer: NamedHold, ttlMs: number): Promise<Outcome<Hold>> {
    const { session: generation, lock_name: name } = outer.extra;
    // Only a hold of this client's, on the session it was granted on.
    if (!this.session.current(generation) || this.session.connectionId !== outer.extra.connection_id) return { type: "fail", error: "not-owner" };
    const rows = await this.session.query<Array<{ got: number | null }>>(SQL.reenter, [name, name], { session: generation });
    if (rows[0].got !== 1) return { type: "fail", error: "not-owner" };
    return { type: "ok", value: { owner: outer.owner, fence: outer.fence, ttlMs, extra: outer.extra } };
  }

  /** Whether its session still holds the name; a statement, so it also restarts the session's idle time. */
  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const h = hold as NamedHold;
    // Nothing sent: the session it was granted on is gone.
    if (!this.session.current(h.extra.session)) return { type: "fail", error: "not-owner" };
    const rows = await this.session.query<Array<{ mine: number | null }>>(SQL.held, [h.extra.lock_name], { session: h.extra.session });
    return rows[0].mine === 1 ? { type: "ok", value: { ttlMs } } : { type: "fail", error: "not-owner" };
  }

  /** `released`: its session's count of the name went down by one (the lock is free once the outermost hold's release brings it to 0). */
  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean; lost?: string }>> {
    const h = hold as NamedHold;
    // The session closed under it (KILL, wait_timeout, a reset link): nothing sent, and its lock is the server's to free.
    if (!this.session.current(h.extra.session)) return { type: "ok", value: { released: false, lost: "session-ended" } };
    const rows = await this.session.query<Array<{ released: number | null }>>(SQL.release, [h.extra.lock_name], { session: h.extra.session });
    return { type: "ok", value: { released: rows[0].released === 1 } };
  }

  close(): Promise<void> {
    return this.session.close();
  }
}
