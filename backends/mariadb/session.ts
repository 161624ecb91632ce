// What the MariaDB lock clients share: whom they connect as, the lock tables, and
// one dedicated mysql2 connection (a session) per logical client, made again
// after it is lost, honest about outcomes. How mysql2 3.24.6 reports each
// ending of a statement against MariaDB 10.11 (measured):
// - an ERROR packet (errno and sqlState, not fatal): a single autocommit
//   statement did not take effect, and the session lives on;
// - the server closed the connection (KILL, wait_timeout, a SIGKILL or
//   shutdown of the server; MariaDB says nothing first): PROTOCOL_CONNECTION_LOST
//   or ECONNRESET, as the statement's error or, between statements, as the
//   connection's 'error' event (without a listener the process would die);
// - a statement on a connection mysql2 knows closed ("Can't add new command
//   when connection is in closed state", no code), or a write to a socket the
//   peer had already closed (EPIPE; ECONNRESET on the write): never sent;
// - mysql2's own timeout (PROTOCOL_SEQUENCE_TIMEOUT) is not fatal, and leaves
//   the statement running at the server and the connection out of step: the
//   outcome is unknown and the connection is destroyed (the server then sees
//   its client gone, and frees what the session held).
// Anything but an ERROR answer or a statement never sent is unknown: thrown,
// and the session dropped.
import mysql from "mysql2/promise";
import type { ClientContext, Endpoint } from "../../clients/lock.ts";

/** Whom a client connects as, and the database the lock tables are in: the run's own server's root and `fencecheck`, or yours. */
export interface MariadbAccess {
  user: string;
  /** A secret: it reaches the workers over their IPC channel only, and nothing writes it down. */
  password?: string;
  /** The database the lock tables are in; empty: none (before it is made). */
  database: string;
}

export const RUNS_OWN: MariadbAccess = { user: "root", database: "fencecheck" };

/** Whom a client connects as: the user's (OpenService.service, under the backend's name), or the run's own server's root. */
export const accessOf = (ctx: ClientContext): MariadbAccess => (ctx.service?.mariadb as MariadbAccess | undefined) ?? RUNS_OWN;

/** Every setting given, so that nothing comes from the environment or an option file. */
export function connectionConfig(at: { host: string; port: number }, access: MariadbAccess, timeoutMs: number): mysql.ConnectionOptions {
  return {
    host: at.host,
    port: at.port,
    user: access.user,
    ...(access.password !== undefined ? { password: access.password } : {}),
    ...(access.database ? { database: access.database } : {}),
    connectTimeout: timeoutMs,
    // BIGINT fences as strings, never rounded.
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    // affectedRows = rows changed, not rows matched (mysql2 asks for FOUND_ROWS by default).
    flags: ["-FOUND_ROWS"],
    enableKeepAlive: true,
    keepAliveInitialDelay: 1000,
  };
}

/** One connection of its own as `access` says, for `f`, ended after it. */
export async function connectAs<T>(at: { host: string; port: number }, access: MariadbAccess, timeoutMs: number, f: (c: mysql.Connection) => Promise<T>): Promise<T> {
  const c = await mysql.createConnection(connectionConfig(at, access, timeoutMs));
  c.on("error", () => {});
  try {
    return await f(c);
  } finally {
    c.destroy();
  }
}

/** The lock tables, qualified with their database (never the connection's current one). */
export function lockTables(database: string): { leases: string; named: string } {
  return { leases: `${mysql.escapeId(database)}.fencecheck_leases`, named: `${mysql.escapeId(database)}.fencecheck_named` };
}

/**
 * The lock tables, made in `database` (which must exist) before the clients
 * come. Names and owners compare byte for byte (utf8mb4_bin), as GET_LOCK
 * compares its names; a key may have 768 characters (3072 bytes, InnoDB's
 * longest index key).
 */
export function lockTablesSql(database: string): string[] {
  const t = lockTables(database);
  return [
    `CREATE TABLE IF NOT EXISTS ${t.leases} (
  name VARCHAR(768) NOT NULL PRIMARY KEY,
  owner VARCHAR(255) NULL,
  expires_at DATETIME(6) NOT NULL,
  fence BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    `CREATE TABLE IF NOT EXISTS ${t.named} (
  name VARCHAR(768) NOT NULL PRIMARY KEY,
  owner VARCHAR(255) NOT NULL,
  granted_at DATETIME(6) NOT NULL,
  connection_id BIGINT NOT NULL,
  fence BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
  ];
}

interface DriverError extends Error {
  code?: string;
  errno?: number;
  sqlState?: string;
  fatal?: boolean;
  syscall?: string;
}

/** The server answered with an ERROR packet: the statement did not take effect, the session lives on. */
export const answeredWithError = (err: unknown): boolean => {
  const e = err as DriverError;
  return typeof e?.errno === "number" && typeof e.sqlState === "string" && e.fatal !== true;
};

export const errnoOf = (err: unknown): number | undefined => (err as DriverError)?.errno;

/** The statement certainly never reached the server: refused on a closed connection, or its write failed. */
function neverSent(err: unknown): boolean {
  const e = err as DriverError;
  if (/connection is in closed state/i.test(String(e?.message))) return true;
  return e?.code === "EPIPE" || (e?.syscall === "write" && e.code === "ECONNRESET");
}

/** mysql2's errors with the history's short codes (docs/history-format.md). */
function named(err: unknown, code: string): Error {
  return Object.assign(new Error(String((err as Error)?.message ?? err), { cause: err }), { code });
}
const HISTORY_CODES: Record<string, string> = { PROTOCOL_SEQUENCE_TIMEOUT: "timeout", PROTOCOL_CONNECTION_LOST: "conn-closed" };

/** A statement that was never sent: thrown with this code, it is a `fail` (workloads/client.ts counts conn-refused as such). */
export const NOT_SENT = "conn-refused";

export class MariadbSession {
  private conn: mysql.Connection | null = null;
  private connecting: Promise<mysql.Connection> | null = null;
  /** Counts the sessions made so far: a hold remembers the one it was granted on. */
  generation = 0;
  /** The server's id of the current session (CONNECTION_ID(), what KILL takes). */
  connectionId: number | null = null;
  /**
   * The sessions whose connection closed between statements: the server ended
   * them (KILL, wait_timeout, a shutdown), or the link was reset. Nothing can be
   * sent on them any more, and the server frees their locks once its side is
   * closed (through the run's proxy, at once: it closes both sides).
   */
  private readonly closedIdle = new Set<number>();
  /** Statements sent and not yet answered: a close meanwhile may have come after one ran. */
  private inFlight = 0;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly commandTimeoutMs: number,
    private readonly access: MariadbAccess = RUNS_OWN,
  ) {}

  /** The session is the one a hold was granted on, and still connected. */
  current(generation: number): boolean {
    return this.conn !== null && this.generation === generation;
  }

  /** Whether session `generation`'s connection closed between statements (not merely that a statement on it failed). */
  closedWhileIdle(generation: number): boolean {
    return this.closedIdle.has(generation);
  }

  /** The generation of the session now open, connecting first if there is none. */
  async open(): Promise<number> {
    await this.connect();
    return this.generation;
  }

  private connect(): Promise<mysql.Connection> {
    if (this.conn) return Promise.resolve(this.conn);
    this.connecting ??= (async () => {
      const generation = this.generation + 1;
      let c: mysql.Connection;
      try {
        c = await mysql.createConnection(connectionConfig(this.endpoint, this.access, this.commandTimeoutMs));
      } catch (err) {
        // No statement was sent on a session that never began: a `fail`.
        throw named(new Error(`no session with ${this.endpoint.name}: ${(err as Error).message}`), NOT_SENT);
      }
      // mysql2 says 'end' or 'error' (in either order) when the server closes an
      // idle connection; one we dropped ourselves is no longer this.conn by then.
      const lost = () => {
        if (this.conn === c && this.inFlight === 0) this.closedIdle.add(generation);
        this.drop(c);
      };
      c.on("error", lost);
      c.on("end", lost);
      this.generation = generation;
      this.connectionId = c.threadId;
      this.conn = c;
      return c;
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private drop(c: mysql.Connection): void {
    if (this.conn === c) {
      this.conn = null;
      this.connectionId = null;
    }
    c.destroy();
  }

  /**
   * One statement on the session (connecting first if there is none);
   * `timeoutMs` for one that waits on purpose. `session` pins it to the session
   * of that generation (one that holds a lock): it is then never sent on
   * another. A statement that needs no particular session and was never sent
   * (the server had just closed the idle session) is sent once more, on a new one.
   */
  async query<T>(sql: string, values: unknown[], opts: { timeoutMs?: number; session?: number } = {}): Promise<T> {
    if (opts.session !== undefined && !this.current(opts.session))
      throw named(new Error(`the session that holds the lock (${opts.session}) was lost; not sent on another`), NOT_SENT);
    try {
      return await this.once<T>(sql, values, opts.timeoutMs);
    } catch (err) {
      if (opts.session !== undefined || (err as { code?: string }).code !== NOT_SENT || !this.sentNothing(err)) throw err;
    }
    return this.once<T>(sql, values, opts.timeoutMs);
  }

  /** Whether a NOT_SENT error came from a closed session (worth one retry), not from a refused connect. */
  private sentNothing(err: unknown): boolean {
    return !/^no session with/.test(String((err as Error).message));
  }

  private async once<T>(sql: string, values: unknown[], timeoutMs = this.commandTimeoutMs): Promise<T> {
    const c = await this.connect();
    this.inFlight++;
    try {
      const [rows] = await c.query({ sql, values, timeout: timeoutMs });
      return rows as T;
    } catch (err) {
      if (answeredWithError(err)) throw err;
      this.drop(c);
      if (neverSent(err)) throw named(err, NOT_SENT);
      const code = HISTORY_CODES[(err as DriverError).code ?? ""];
      throw code ? named(err, code) : err;
    } finally {
      this.inFlight--;
    }
  }

  async close(): Promise<void> {
    const c = this.conn;
    this.conn = null;
    this.connectionId = null;
    if (c) await c.end().catch(() => c.destroy());
  }
}
