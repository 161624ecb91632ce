// A session advisory lock (pg_advisory_lock) on a connection of the client's own.
// Waiters queue in the server's lock manager, bounded by lock_timeout (the
// acquire timeout). Once granted, one statement records the grant (owner, time)
// in fencecheck_advisory (of the run's schema) and increments the key's fence there, so the fence
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
//
// A read-write lock (--lock rw) is the same with pg_advisory_lock_shared for a
// read, pg_advisory_lock for a write, as Postgres documents them. Every grant,
// shared or not, moves the fence once: a writer's grant runs while it alone
// holds, after every earlier holder's grant and before every later one's, so a
// writer's fence is above every fence granted before it and below every one
// after. Readers holding together have distinct fences in the order their
// grant statements ran (the counter row's lock orders them), which need not be
// the order the server let them in: each fence of a read is above the last
// writer's and below the next one's, and that is all the fence says.
//
// A waiter whose AbortSignal fires cancels its waiting statement from a second
// connection (pg_cancel_backend of its session's server process). The server
// then answers the lock statement "canceling statement due to user request"
// (or any other ERROR) and the lock was certainly not taken: fail "cancelled".
// If the lock statement does not answer, or its connection breaks, the outcome
// is unknown ("cancel-unknown") and the session is dropped: its server process
// may wait on, and hold the lock once granted, until it finds its client gone.
import { CANCELLED, CANCEL_UNKNOWN, UnknownOutcome, type AcquireRequest, type ClientContext, type Hold, type LockClient, type Outcome } from "../../clients/lock.ts";
import type { QueryResult, QueryResultRow } from "pg";
import { createHash } from "node:crypto";
import { PgSession, accessOf, answeredWithError, lockTables, sqlState } from "./session.ts";
import { sleep } from "../../lib/time.ts";

/**
 * The lock's two int4 keys (Postgres' two-key form, which it never confuses
 * with the one-bigint form): the first 8 bytes of the SHA-256 of the lock's
 * name, as two signed halves. The name starts with the run's key prefix, so on a
 * server shared with other applications the run's locks and theirs are one lock
 * only where 64 bits of hash happen to agree; two names of the run with one
 * hash would share a lock too (they would exclude each other needlessly, never
 * admit two holders of one name).
 */
export function advisoryKeys(name: string): [number, number] {
  const h = createHash("sha256").update(name, "utf8").digest();
  return [h.readInt32BE(0), h.readInt32BE(4)];
}

// lock_timeout is set for this statement alone, in a subquery scanned before
// the lock is asked for. idle_session_timeout is set for the session before it
// waits: a waiter whose worker is frozen when the server grants it the lock
// holds it from then on, and must lose it too once it has been silent for --ttl.
const lock = (fn: string): string => `SELECT ${fn}($1::int4, $2::int4)
  FROM (SELECT set_config('lock_timeout', $3, true), set_config('idle_session_timeout', $4, false)) AS s`;
const tryLock = (fn: string): string => `SELECT ${fn}($1::int4, $2::int4) AS locked
  FROM (SELECT set_config('idle_session_timeout', $3, false)) AS s`;

type Mode = "read" | "write";
const LOCK: Record<Mode, string> = { write: lock("pg_advisory_lock"), read: lock("pg_advisory_lock_shared") };
const TRY_LOCK: Record<Mode, string> = { write: tryLock("pg_try_advisory_lock"), read: tryLock("pg_try_advisory_lock_shared") };

// pg_locks shows the two keys as unsigned oids.
const HELD = `
SELECT (SELECT count(*)::int FROM pg_locks
  WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
    AND classid = ($1::int4::bigint & 4294967295)::oid AND objid = ($2::int4::bigint & 4294967295)::oid AND objsubid = 2) AS n,
  set_config('idle_session_timeout', $3, false)`;

const UNLOCK: Record<Mode, string> = {
  write: `SELECT pg_advisory_unlock($1::int4, $2::int4) AS unlocked`,
  read: `SELECT pg_advisory_unlock_shared($1::int4, $2::int4) AS unlocked`,
};

/** The statements on the counter table of the run's schema. */
function statements(advisory: string): { grant: string; cancel: string } {
  return {
    // The grant's record and fence, and TCP keepalives after whole seconds of a
    // silent peer (one that vanished: a proxy's socket answers them).
    grant: `
WITH g AS (
  INSERT INTO ${advisory} AS a (name, owner, granted_at, fence) VALUES ($1, $2, clock_timestamp(), 1)
  ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, granted_at = EXCLUDED.granted_at, fence = a.fence + 1
  RETURNING fence)
SELECT fence, pg_backend_pid() AS pid,
  set_config('tcp_keepalives_idle', $3, false),
  set_config('tcp_keepalives_interval', '1', false),
  set_config('tcp_keepalives_count', '2', false)
FROM g`,
    // A waiting lock statement's cancel, and the owner of the last grant recorded
    // (the holder the waiter was behind, for a mutex or a writer; one of them, for readers).
    cancel: `SELECT pg_cancel_backend($1) AS sent, (SELECT owner FROM ${advisory} WHERE name = $2) AS behind`,
  };
}

/** SQLSTATE lock_not_available: lock_timeout ran out while waiting. */
const LOCK_TIMEOUT = "55P03";

/** How a lock statement ended: taken, or the error it was answered with (or failed by). */
type Settled = { err?: unknown };

interface AdvisoryHold extends Hold {
  extra: { session: number; backend_pid: number };
}

export class PostgresAdvisoryLock implements LockClient {
  private readonly session: PgSession;
  private readonly ownerPrefix: string;
  private readonly commandTimeoutMs: number;
  private holds = 0;
  /** The owners whose holds are shared (read): released with pg_advisory_unlock_shared. */
  private readonly shared = new Set<string>();
  private readonly sql: ReturnType<typeof statements>;

  constructor(ctx: ClientContext) {
    const access = accessOf(ctx);
    this.session = new PgSession(ctx.endpoints[0], ctx.commandTimeoutMs, access);
    this.sql = statements(lockTables(access.schema).advisory);
    this.ownerPrefix = ctx.ownerPrefix;
    this.commandTimeoutMs = ctx.commandTimeoutMs;
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number, request?: AcquireRequest): Promise<Outcome<Hold>> {
    const owner = `${this.ownerPrefix}-h${++this.holds}`;
    const mode: Mode = request?.mode === "read" ? "read" : "write";
    if (timeoutMs === 0) {
      const r = await this.session.query<{ locked: boolean }>(TRY_LOCK[mode], [...advisoryKeys(key), `${ttlMs}ms`]);
      if (!r.rows[0].locked) return { type: "fail", error: "busy" };
    } else {
      const failed = await this.wait(key, owner, mode, ttlMs, timeoutMs, request?.signal);
      if (failed) return failed;
    }
    const generation = this.session.generation;
    try {
      // Only on the session that holds the lock: on any other the grant would be recorded for a lock nobody holds.
      const r = await this.onSession<{ fence: string; pid: number }>(generation, this.sql.grant, [key, owner, String(Math.max(1, Math.ceil(ttlMs / 1000)))]);
      // Ended by the server before the grant ran (frozen past --ttl right after the lock was granted): the lock went with it.
      if (r === "ended") return { type: "fail", error: "session-ended" };
      const hold: AdvisoryHold = { owner, fence: Number(r.rows[0].fence), ttlMs, extra: { session: generation, backend_pid: r.rows[0].pid } };
      if (mode === "read") this.shared.add(owner);
      return { type: "ok", value: hold };
    } catch (err) {
      // Locked but not recorded: the session goes, and its lock with it, or the
      // next acquire on it would be granted again (session locks are re-entrant).
      await this.session.close();
      throw err;
    }
  }

  /**
   * Wait in the server's queue for the lock (bounded by lock_timeout): null once
   * it is ours, or why not. An abort of `signal` withdraws the waiter.
   */
  private async wait(key: string, owner: string, mode: Mode, ttlMs: number, timeoutMs: number, signal?: AbortSignal): Promise<Outcome<Hold> | null> {
    const cancelled = { type: "fail", error: CANCELLED, value: { owner } } as const;
    // Nothing sent, nothing queued.
    if (signal?.aborted) return cancelled;
    const settled: Promise<Settled> = this.session.query(LOCK[mode], [...advisoryKeys(key), `${timeoutMs}ms`, `${ttlMs}ms`], { timeoutMs: timeoutMs + this.commandTimeoutMs }).then(
      () => ({}),
      (err: unknown) => ({ err }),
    );
    const ended = await (signal ? Promise.race([settled, abortOf(signal)]) : settled);
    if (ended !== "aborted") return this.locked(ended);
    const withdrawn = await this.withdraw(key, settled);
    if (!withdrawn) {
      // The lock statement may still be waiting, and be granted: the session goes, and its lock with it once the server notices.
      await this.session.close();
      throw new UnknownOutcome(CANCEL_UNKNOWN, `a cancelled lock statement did not answer within ${this.commandTimeoutMs} ms`);
    }
    const err = withdrawn.err;
    // Granted before the cancel came (ours), or lock_timeout ran out first.
    if (err === undefined || sqlState(err) === LOCK_TIMEOUT) return this.locked(withdrawn);
    // An ERROR answered (ours: query_canceled), or no session to send it on: no lock taken, none waiting.
    if (answeredWithError(err) || (err as { code?: unknown }).code === "conn-refused") return { ...cancelled, value: { owner, ...(withdrawn.behind ? { behind: withdrawn.behind } : {}) } };
    throw new UnknownOutcome(CANCEL_UNKNOWN, `a cancelled lock statement's connection broke: ${String((err as Error)?.message ?? err)}`);
  }

  /** A lock statement's end as before cancellation: null (taken), a timeout, or thrown. */
  private locked(ended: Settled): Outcome<Hold> | null {
    if (ended.err === undefined) return null;
    if (sqlState(ended.err) === LOCK_TIMEOUT) return { type: "fail", error: "timeout" };
    throw ended.err;
  }

  /**
   * Cancel our waiting lock statement until it answers, for at most a command
   * timeout: how it ended (a lock granted before the cancel came is ours), or
   * null if it has not. A cancel sent before the statement reached the server
   * (or while the session was still connecting) cancels nothing, so it is sent
   * again; each is let land before this returns, since one that arrived during
   * a later statement would cancel that one instead.
   */
  private async withdraw(key: string, settled: Promise<Settled>): Promise<(Settled & { behind?: string }) | null> {
    const end = Date.now() + this.commandTimeoutMs;
    let behind: string | undefined;
    for (;;) {
      const pid = this.session.pid;
      const cancel = pid === null ? sleep(20) : this.session.aside<{ behind: string | null }>(this.sql.cancel, [pid, key]).then((r) => void (behind = r.rows[0].behind ?? behind), () => {});
      const first = await Promise.race([settled, cancel.then(() => null)]);
      await cancel;
      const ended = first ?? (await Promise.race([settled, sleep(100).then(() => null)]));
      if (ended) return { ...ended, behind };
      if (Date.now() >= end) return null;
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
    const r = await this.onSession<{ n: number }>((hold as AdvisoryHold).extra.session, HELD, [...advisoryKeys(key), `${ttlMs}ms`]);
    return r !== "ended" && r.rows[0].n > 0 ? { type: "ok", value: { ttlMs } } : { type: "fail", error: "not-owner" };
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const mode: Mode = this.shared.delete(hold.owner) ? "read" : "write";
    const r = await this.onSession<{ unlocked: boolean }>((hold as AdvisoryHold).extra.session, UNLOCK[mode], advisoryKeys(key));
    return { type: "ok", value: { released: r !== "ended" && r.rows[0].unlocked } };
  }

  close(): Promise<void> {
    return this.session.close();
  }
}

/** Resolves "aborted" when `signal` aborts. */
function abortOf(signal: AbortSignal): Promise<"aborted"> {
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve("aborted"), { once: true }));
}
