// What both Postgres lock clients share: one dedicated connection (a session) per
// logical client, made again after it is lost, and honest about outcomes. A
// statement the server answered with an ERROR certainly did not take effect
// (each runs in a transaction of its own) and leaves the session as it was;
// anything else (no answer in time, a lost connection, a FATAL) may have taken
// effect, so it is thrown (an `info`) and the session is dropped: its locks,
// if any, go with it once the server notices.
import { checkServerIdentity } from "node:tls";
import { isIP } from "node:net";
import pg from "pg";
import type { ClientContext, Endpoint } from "../../clients/lock.ts";

/** The run's own server (backends/postgres/server.ts): trust authentication, the superuser, the lock tables in public. */
/**
 * Who a Postgres client connects as, and where the lock tables are: on the
 * run's own server the superuser and the public schema; on a server of the
 * user's (--deploy external) the user's role and a schema of the run's own. The
 * password is a secret: it reaches the workers over their IPC channel only, and
 * nothing writes it down.
 */
export interface PostgresAccess {
  user: string;
  password?: string;
  database: string;
  /** The schema the lock tables are in (an identifier, unquoted). */
  schema: string;
  /** Names the run's sessions in pg_stat_activity, so that the teardown can end any it left. */
  applicationName: string;
  /** TLS (PGSSLMODE): whether the certificate is checked, and the host it must be for; absent: none. */
  tls?: PostgresTls;
}

export interface PostgresTls {
  /** libpq's words: require (encrypted, not checked), verify-ca (signed by `ca`), verify-full (and for `host`). */
  mode: "require" | "verify-ca" | "verify-full";
  /** PEM of the certificate authorities (PGSSLROOTCERT); absent: Node's own. */
  ca?: string;
  /** The server's own host name: clients reach it through a proxy on loopback, and the certificate is for this. */
  host: string;
}

export const RUNS_OWN: PostgresAccess = { user: "postgres", database: "postgres", schema: "public", applicationName: "fencecheck" };

/** Whom a client connects as: the user's (OpenService.service, under the backend's name), or the run's own server's superuser. */
export const accessOf = (ctx: ClientContext): PostgresAccess => (ctx.service?.postgres as PostgresAccess | undefined) ?? RUNS_OWN;

/**
 * The lock tables' names, qualified with their schema: never found through
 * search_path, which a pooler in transaction mode (pgbouncer) does not keep
 * from one statement to the next.
 */
export function lockTables(schema: string): { leases: string; advisory: string; fences: string; shedlock: string } {
  const s = pg.escapeIdentifier(schema);
  return { leases: `${s}.fencecheck_leases`, advisory: `${s}.fencecheck_advisory`, fences: `${s}.fencecheck_fences`, shedlock: `${s}.shedlock` };
}

/**
 * The lock tables, made in `schema` (which must exist) before the clients come:
 * the two clients' own; the fence counters of --fence-source (counter-fenced.ts);
 * and ShedLock's table, as its README gives it for Postgres, for the
 * shedlock-jdbc adapter programs (TIMESTAMP without zone: the adapter writes UTC).
 */
export function lockTablesSql(schema: string): string {
  const t = lockTables(schema);
  return `
CREATE TABLE IF NOT EXISTS ${t.leases} (
  name text PRIMARY KEY,
  owner text,
  expires_at timestamptz NOT NULL,
  fence bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS ${t.advisory} (
  name text PRIMARY KEY,
  owner text NOT NULL,
  granted_at timestamptz NOT NULL,
  fence bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS ${t.fences} (
  name text PRIMARY KEY,
  fence bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS ${t.shedlock} (
  name VARCHAR(64) NOT NULL,
  lock_until TIMESTAMP NOT NULL,
  locked_at TIMESTAMP NOT NULL,
  locked_by VARCHAR(255) NOT NULL,
  PRIMARY KEY (name)
);`;
}

/**
 * How pg reaches a server as `access` says: every setting given, so that
 * nothing comes from pg's own reading of the environment (PGSSLMODE, PGUSER),
 * in the runner and its workers alike.
 */
export function pgConfig(at: { host: string; port: number }, access: PostgresAccess, timeoutMs: number): pg.ClientConfig {
  return {
    host: at.host,
    port: at.port,
    user: access.user,
    ...(access.password !== undefined ? { password: access.password } : {}),
    database: access.database,
    application_name: access.applicationName,
    ssl: tlsOf(access.tls),
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    keepAlive: true,
  };
}

function tlsOf(tls: PostgresTls | undefined): pg.ClientConfig["ssl"] {
  if (!tls) return false;
  if (tls.mode === "require") return { rejectUnauthorized: false };
  // The connection may go to a proxy on loopback: the name asked for (SNI) and
  // checked (verify-full) is the server's own, not the address dialled.
  return {
    ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
    ...(isIP(tls.host) ? {} : { servername: tls.host }),
    checkServerIdentity: (_dialled: string, cert) => (tls.mode === "verify-full" ? checkServerIdentity(tls.host, cert) : undefined),
  };
}

/** The SQLSTATEs of a server ending a session on purpose: its backend exits, and a session lock goes with it. */
const SESSION_ENDED = new Set([
  "57P01", // admin_shutdown (pg_terminate_backend, a fast shutdown)
  "57P02", // crash_shutdown
  "57P05", // idle_session_timeout
]);

const IDLE_SESSION_TIMEOUT = "57P05";

/** pg's errors with the short codes of the history (docs/history-format.md): its own carry only a message. */
function named(err: unknown): unknown {
  if (sqlState(err) !== undefined || typeof (err as { code?: unknown })?.code === "string") return err;
  const message = String((err as Error)?.message ?? err);
  const code = /timeout/i.test(message) ? "timeout" : /terminated|not queryable|ended/i.test(message) ? "conn-closed" : undefined;
  return code ? Object.assign(new Error(message, { cause: err }), { code }) : err;
}

export const sqlState = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown })?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
};

/** An ERROR the server sent in answer to a statement: the statement did not take effect, the session lives on. */
export const answeredWithError = (err: unknown): boolean =>
  sqlState(err) !== undefined && (err as { severity?: string }).severity === "ERROR";

export class PgSession {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  /** Counts the sessions made so far: a hold remembers the one it was granted on. */
  generation = 0;
  /** The generation the server said it ended (a FATAL it sent: the backend exited, its session locks are free). */
  private endedByServer = 0;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly commandTimeoutMs: number,
    private readonly access: PostgresAccess = RUNS_OWN,
  ) {}

  /** Whether the server certainly ended session `generation` (not merely that our connection broke). */
  serverEnded(generation: number): boolean {
    return this.endedByServer === generation;
  }

  /** The session is the one a hold was granted on, and still connected. */
  current(generation: number): boolean {
    return this.client !== null && this.generation === generation;
  }

  /**
   * The server process of the current session (from the server's BackendKeyData,
   * which pg keeps but does not type), or null if there is no session. Through a
   * pooler it is the pooler's number, which names no server process.
   */
  get pid(): number | null {
    return (this.client as unknown as { processID?: number | null } | null)?.processID ?? null;
  }

  private config(): pg.ClientConfig {
    return pgConfig(this.endpoint, this.access, this.commandTimeoutMs);
  }

  /**
   * One statement on a connection of its own, ended after it: for what cannot
   * wait behind the session's own statement (pg_cancel_backend of a waiting lock).
   */
  async aside<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    const c = new pg.Client(this.config());
    c.on("error", () => {});
    try {
      await c.connect();
      return await c.query<R>(text, values);
    } catch (err) {
      throw named(err);
    } finally {
      c.end().catch(() => {});
    }
  }

  private connect(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const c = new pg.Client(this.config());
      const generation = this.generation + 1;
      c.on("error", (err) => {
        if (SESSION_ENDED.has(sqlState(err) ?? "")) this.endedByServer = generation;
        this.drop(c);
      });
      c.on("end", () => this.drop(c));
      try {
        await c.connect();
      } catch (err) {
        c.end().catch(() => {});
        // No statement was sent on a session that never began: the operation
        // certainly did not happen (a `fail`, as for a refused connection).
        throw Object.assign(new Error(`no session with ${this.endpoint.name}: ${(err as Error).message}`, { cause: err }), { code: "conn-refused" });
      }
      this.generation = generation;
      this.client = c;
      return c;
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private drop(c: pg.Client): void {
    if (this.client === c) this.client = null;
    c.end().catch(() => {});
  }

  /**
   * One statement on the session (connecting first if there is none); `timeoutMs`
   * for one that waits on purpose. `session` pins it to the session of that
   * generation (one that holds a lock): it is then never sent on another.
   */
  async query<R extends pg.QueryResultRow>(text: string, values: unknown[], opts: { timeoutMs?: number; session?: number } = {}): Promise<pg.QueryResult<R>> {
    const timeoutMs = opts.timeoutMs ?? this.commandTimeoutMs;
    if (opts.session !== undefined && !this.current(opts.session))
      throw Object.assign(new Error(`the session that holds the lock (${opts.session}) was lost, and the server may not have noticed yet; not sent on another`), { code: "conn-closed" });
    try {
      return await this.once<R>(text, values, timeoutMs);
    } catch (err) {
      // The server ended the session for idleness before it read our statement
      // (its notice crossed the statement on the wire): nothing ran, so a
      // statement that needs no particular session is sent again, once, on a new one.
      if (sqlState(err) !== IDLE_SESSION_TIMEOUT || opts.session !== undefined) throw named(err);
    }
    try {
      return await this.once<R>(text, values, timeoutMs);
    } catch (err) {
      throw named(err);
    }
  }

  private async once<R extends pg.QueryResultRow>(text: string, values: unknown[], timeoutMs: number): Promise<pg.QueryResult<R>> {
    const c = await this.connect();
    try {
      return await c.query<R>({ text, values, query_timeout: timeoutMs } as pg.QueryConfig);
    } catch (err) {
      if (!answeredWithError(err)) {
        // A FATAL arrives as the query's error rather than as the client's event.
        if (SESSION_ENDED.has(sqlState(err) ?? "")) this.endedByServer = this.generation;
        this.drop(c);
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    const c = this.client;
    this.client = null;
    if (c) await c.end().catch(() => {});
  }
}
