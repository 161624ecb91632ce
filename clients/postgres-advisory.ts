// A session advisory lock (pg_advisory_lock) on a connection of the client's own.
// Waiters queue in the server's lock manager, bounded by lock_timeout (the
// acquire timeout). Once granted, one statement records the grant (owner, time)
// in fencecheck_advisory and increments the key's fence there, so the fence
// moves once per grant, in grant order: only the lock's holder runs it.
//
// What frees the lock when a holder dies or is cut off: the end of its session,
// and nothing else. A client process that dies closes its socket and the server
// ends the session at once. A holder that is frozen or cut off keeps its
// session, and its lock, for as long as the server does not notice: through a
// proxy that merely stops forwarding, the server's TCP peer (the proxy) is alive
// and keepalives are answered, so it never does. --ttl bounds that: the client
// asks the server to end its session after --ttl without a
// statement (idle_session_timeout), which turns the session lock into a lease
// of --ttl from the last statement (a renew is a statement). An idle client
// loses its session the same way, and makes a new one at its next acquire.
// TCP keepalives of the session, in whole seconds, cover a peer that vanished
// outright.
// `npm run experiment -- dead-session` measures each.
import type { ClientContext, Hold, LockClient, Outcome } from "./lock.ts";
import type { QueryResult, QueryResultRow } from "pg";
import { PgSession, sqlState } from "./postgres-session.ts";

/** The advisory lock's first key: this project's, so its locks are told apart from an application's. */
const LOCK_CLASS = 0x66630000;

// The second key is the lock name's hash: two names with one hash share a lock
// (they exclude each other needlessly, never admit two holders of one name).
//
// lock_timeout is set for this statement alone, in a subquery scanned before
// the lock is asked for. idle_session_timeout is set for the session before it
// waits: a waiter whose worker is frozen when the server grants it the lock
// holds it from then on, and must lose it too once it has been silent for --ttl.
const LOCK = `SELECT pg_advisory_lock(${LOCK_CLASS}, hashtext($1))
  FROM (SELECT set_config('lock_timeout', $2, true), set_config('idle_session_timeout', $3, false)) AS s`;
const TRY_LOCK = `SELECT pg_try_advisory_lock(${LOCK_CLASS}, hashtext($1)) AS locked
  FROM (SELECT set_config('idle_session_timeout', $2, false)) AS s`;

// The grant's record and fence, and TCP keepalives after whole seconds of a
// silent peer (one that vanished: a proxy's socket answers them).
const GRANT = `
WITH g AS (
  INSERT INTO fencecheck_advisory AS a (name, owner, granted_at, fence) VALUES ($1, $2, clock_timestamp(), 1)
  ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, granted_at = EXCLUDED.granted_at, fence = a.fence + 1
  RETURNING fence)
SELECT fence, pg_backend_pid() AS pid,
  set_config('tcp_keepalives_idle', $3, false),
  set_config('tcp_keepalives_interval', '1', false),
  set_config('tcp_keepalives_count', '2', false)
FROM g`;

const HELD = `
SELECT (SELECT count(*)::int FROM pg_locks
  WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
    AND classid = ${LOCK_CLASS}::bigint::oid AND objid = (hashtext($1)::bigint & 4294967295)::oid AND objsubid = 2) AS n,
  set_config('idle_session_timeout', $2, false)`;

const UNLOCK = `SELECT pg_advisory_unlock(${LOCK_CLASS}, hashtext($1)) AS unlocked`;

/** SQLSTATE lock_not_available: lock_timeout ran out while waiting. */
const LOCK_TIMEOUT = "55P03";

interface AdvisoryHold extends Hold {
  extra: { session: number; backend_pid: number };
}

export class PostgresAdvisoryLock implements LockClient {
  private readonly session: PgSession;
  private readonly ownerPrefix: string;
  private readonly commandTimeoutMs: number;
  private holds = 0;

  constructor(ctx: ClientContext) {
    this.session = new PgSession(ctx.endpoints[0], ctx.commandTimeoutMs);
    this.ownerPrefix = ctx.ownerPrefix;
    this.commandTimeoutMs = ctx.commandTimeoutMs;
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const owner = `${this.ownerPrefix}-h${++this.holds}`;
    if (timeoutMs === 0) {
      const r = await this.session.query<{ locked: boolean }>(TRY_LOCK, [key, `${ttlMs}ms`]);
      if (!r.rows[0].locked) return { type: "fail", error: "busy" };
    } else {
      try {
        await this.session.query(LOCK, [key, `${timeoutMs}ms`, `${ttlMs}ms`], { timeoutMs: timeoutMs + this.commandTimeoutMs });
      } catch (err) {
        if (sqlState(err) === LOCK_TIMEOUT) return { type: "fail", error: "timeout" };
        throw err;
      }
    }
    const generation = this.session.generation;
    try {
      // Only on the session that holds the lock: on any other the grant would be recorded for a lock nobody holds.
      const r = await this.onSession<{ fence: string; pid: number }>(generation, GRANT, [key, owner, String(Math.max(1, Math.ceil(ttlMs / 1000)))]);
      // Ended by the server before the grant ran (frozen past --ttl right after the lock was granted): the lock went with it.
      if (r === "ended") return { type: "fail", error: "session-ended" };
      const hold: AdvisoryHold = { owner, fence: Number(r.rows[0].fence), ttlMs, extra: { session: generation, backend_pid: r.rows[0].pid } };
      return { type: "ok", value: hold };
    } catch (err) {
      // Locked but not recorded: the session goes, and its lock with it, or the
      // next acquire on it would be granted again (session locks are re-entrant).
      await this.session.close();
      throw err;
    }
  }

  /**
   * A statement on session `generation` only. "ended": the server ended that
   * session (it sent us why) before the statement ran, so its locks are gone
   * and the statement did nothing. A session lost any other way may live on at
   * the server: unknown, thrown.
   */
  private async onSession<R extends QueryResultRow>(generation: number, text: string, values: unknown[]): Promise<QueryResult<R> | "ended"> {
    try {
      return await this.session.query<R>(text, values, { session: generation });
    } catch (err) {
      if (this.session.serverEnded(generation)) return "ended";
      throw err;
    }
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const r = await this.onSession<{ n: number }>((hold as AdvisoryHold).extra.session, HELD, [key, `${ttlMs}ms`]);
    return r !== "ended" && r.rows[0].n > 0 ? { type: "ok", value: { ttlMs } } : { type: "fail", error: "not-owner" };
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const r = await this.onSession<{ unlocked: boolean }>((hold as AdvisoryHold).extra.session, UNLOCK, [key]);
    return { type: "ok", value: { released: r !== "ended" && r.rows[0].unlocked } };
  }

  close(): Promise<void> {
    return this.session.close();
  }
}
