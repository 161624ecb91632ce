// mariadb-get-lock-pool, kept on purpose (as redis-unsafe-release is): GET_LOCK
// and RELEASE_LOCK through mysql2's client-side pool (pool.query), as code does
// that treats a named lock like any other query. A named lock belongs to the
// connection that ran GET_LOCK, and the pool hands that connection, lock and all,
// to whichever caller asks next: mysql2 gives out the most recently released
// free connection and does not reset it (resetOnRelease is off by default; on,
// COM_RESET_CONNECTION would free the lock under its holder instead). Another
// caller's GET_LOCK of the name then runs on the session that holds it, and is
// granted at once (GET_LOCK is re-entrant): two holders, with no fault at all
// (scenario N3, MariaDB's P1). The fence comes from the counter row as for
// mariadb-get-lock, through the pool too, so fences still follow grants.
//
// One pool per logical client by default (each its own program); with
// --connections per-worker one pool shared by the clients of a worker, as one
// program's threads share theirs: that is where the lock is handed on. No
// wait_timeout is set (such code sets none): only a release or the end of the
// pooled connection frees the lock, and renew means nothing to it.
import mysql from "mysql2/promise";
import type { ResultSetHeader } from "mysql2";
import type { ClientContext, Endpoint, Hold, LockClient, Outcome } from "../../clients/lock.ts";
import { NOT_SENT, accessOf, connectionConfig, lockTables, type MariadbAccess } from "./session.ts";
import { grantSql, lockName } from "./get-lock.ts";

/** The pools shared by a worker's clients (--connections per-worker), by server and login, with how many use each. */
const shared = new Map<string, { pool: mysql.Pool; users: number }>();

function poolFor(endpoint: Endpoint, access: MariadbAccess, timeoutMs: number, share: boolean): { pool: mysql.Pool; release(): Promise<void> } {
  const make = (): mysql.Pool => {
    const pool = mysql.createPool({ ...connectionConfig(endpoint, access, timeoutMs), connectionLimit: 10 });
    // A pooled connection the server closes while idle is dropped by the pool; the event must be heard all the same.
    pool.on("connection", (c) => void (c as unknown as { on(e: string, f: () => void): void }).on("error", () => {}));
    return pool;
  };
  if (!share) {
    const pool = make();
    return { pool, release: () => pool.end().catch(() => {}) };
  }
  const id = `${endpoint.host}:${endpoint.port}/${access.user}/${access.database}`;
  let entry = shared.get(id);
  if (!entry) shared.set(id, (entry = { pool: make(), users: 0 }));
  entry.users++;
  const it = entry;
  return {
    pool: it.pool,
    release: async () => {
      if (--it.users > 0) return;
      shared.delete(id);
      await it.pool.end().catch(() => {});
    },
  };
}

/** An error that is the server's answer: the statement did not take effect, and the connection is as it was. */
const answered = (err: unknown): boolean => typeof (err as { errno?: unknown })?.errno === "number" && typeof (err as { sqlState?: unknown }).sqlState === "string" && (err as { fatal?: boolean }).fatal !== true;

export class MariadbPoolGetLock implements LockClient {
  readonly renews = false;
  private readonly pool: mysql.Pool;
  private readonly releasePool: () => Promise<void>;
  private readonly grant: string;
  private holds = 0;

  constructor(private readonly ctx: ClientContext) {
    const access = accessOf(ctx);
    ({ pool: this.pool, release: this.releasePool } = poolFor(ctx.endpoints[0], access, ctx.commandTimeoutMs, ctx.options.sharedConnection === true));
    this.grant = grantSql(lockTables(access.database).named);
  }

  /**
   * What pool.query does, in its two steps, so that a connect that failed (the
   * server down: nothing sent, a `fail`) is told from a statement whose answer
   * was lost (unknown, thrown). A connection whose statement had no answer is
   * destroyed rather than given back out of step (pool.query would give it back).
   */
  private async query<T>(sql: string, values: unknown[], timeoutMs = this.ctx.commandTimeoutMs): Promise<T> {
    let c: mysql.PoolConnection;
    try {
      c = await this.pool.getConnection();
    } catch (err) {
      throw Object.assign(new Error(`no pooled connection: ${(err as Error).message}`, { cause: err }), { code: NOT_SENT });
    }
    try {
      const [rows] = await c.query({ sql, values, timeout: timeoutMs });
      c.release();
      return rows as T;
    } catch (err) {
      if (answered(err)) c.release();
      else c.destroy();
      // Handed a connection the server had closed while it sat in the pool: mysql2 refused to send on it.
      if (/connection is in closed state/i.test(String((err as Error)?.message))) throw Object.assign(new Error(String((err as Error).message), { cause: err }), { code: NOT_SENT });
      throw err;
    }
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const owner = `${this.ctx.ownerPrefix}-h${++this.holds}`;
    const name = lockName(key);
    const rows = await this.query<Array<{ got: number | null }>>("SELECT GET_LOCK(?, ?) AS got", [name, timeoutMs / 1000], timeoutMs + this.ctx.commandTimeoutMs);
    if (rows[0].got === 0) return { type: "fail", error: timeoutMs > 0 ? "timeout" : "busy" };
    if (rows[0].got !== 1) return { type: "fail", error: "interrupted" };
    // On whichever pooled connection is free: the one that just ran GET_LOCK, when no other caller took it meanwhile.
    const r = await this.query<ResultSetHeader>(this.grant, [key, owner]);
    return { type: "ok", value: { owner, fence: Number(r.insertId), ttlMs } };
  }

  /** Nothing to renew (no lease): whether some session holds the name, as such code would ask. */
  async renew(key: string, _hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const rows = await this.query<Array<{ used: number | null }>>("SELECT IS_USED_LOCK(?) AS used", [lockName(key)]);
    return rows[0].used !== null ? { type: "ok", value: { ttlMs } } : { type: "fail", error: "not-owner" };
  }

  /** RELEASE_LOCK on whichever pooled connection is free: 1 when that connection held the name (and its count went down). */
  async release(key: string): Promise<Outcome<{ released: boolean }>> {
    const rows = await this.query<Array<{ released: number | null }>>("SELECT RELEASE_LOCK(?) AS released", [lockName(key)]);
    return { type: "ok", value: { released: rows[0].released === 1 } };
  }

  close(): Promise<void> {
    return this.releasePool();
  }
}
