// --backend mariadb --deploy external: a run on a MariaDB of the user's (a
// staging server). Where it is comes from --endpoints, or else MYSQL_HOST and
// MYSQL_TCP_PORT, and the password from MYSQL_PWD: the variables MariaDB's own
// client reads. That client takes the user from the login name on Unix (it reads
// no variable for it), so the run reads MYSQL_USER, and else the login name too.
// The password goes to the workers over IPC, never written down.
//
// The run keeps its lock tables in a database of its own, named after its key
// prefix, made at the start and dropped by the process group's teardown (so
// also when the run fails or is interrupted), once the run's sessions (those
// whose current database it is), and with them their named locks, are ended; it
// touches nothing else there. Before anything starts the server is asked
// whether the user may make and drop that database, and whether it takes
// writes: a no is bad input (254) naming what is missing.
import { createHash } from "node:crypto";
import { userInfo } from "node:os";
import mysql from "mysql2/promise";
import { BadInput } from "../../lib/index.ts";
import { placeServers } from "../../cluster/external-proxies.ts";
import type { PlacedServer } from "../../cluster/external.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { removedOnce, type ExternalServiceContext, type OpenService, type RunOnService } from "../../core/index.ts";
import { connectAs, lockTables, lockTablesSql, type MariadbAccess } from "./session.ts";
import { onServer } from "./start.ts";

const WHAT = "--backend mariadb --deploy external";
const ADMIN_TIMEOUT_MS = 10_000;
/** MariaDB's identifiers: at most 64 characters. */
const MAX_IDENTIFIER = 64;

/** Whom the run connects as, from the environment: everything but the run's own database. */
export type Login = Omit<MariadbAccess, "database">;

interface MariadbService {
  server: PlacedServer;
  login: Login;
}

/**
 * The run's database: its key prefix as a lower-case identifier that starts
 * with fencecheck_, cut to 64 characters with a hash of the whole prefix where
 * longer, so two long prefixes do not meet in one name.
 */
export function databaseOf(prefix: string): string {
  let name = prefix.toLowerCase().replace(/[^a-z0-9_]+/g, "_").replace(/^_+|_+$/g, "");
  if (!/^fencecheck(_|$)/.test(name)) name = name ? `fencecheck_${name}` : "fencecheck";
  if (name.length <= MAX_IDENTIFIER) return name;
  const hash = createHash("sha256").update(prefix).digest("hex").slice(0, 8);
  return `${name.slice(0, MAX_IDENTIFIER - hash.length - 1)}_${hash}`;
}

export const loginOf = (env: NodeJS.ProcessEnv): Login => ({ user: env.MYSQL_USER || userInfo().username, ...(env.MYSQL_PWD ? { password: env.MYSQL_PWD } : {}) });

/** mariadb-1 at MYSQL_HOST and MYSQL_TCP_PORT (localhost and 3306 when unset), over TCP (fencecheck reaches no socket). */
export function serverFromEnv(env: NodeJS.ProcessEnv): PlacedServer {
  const host = env.MYSQL_HOST || "localhost";
  if (host.startsWith("/")) throw new BadInput(`${WHAT}: MYSQL_HOST=${host} is a path; the run's clients reach the server over TCP through its fault proxy: give a host name or address (or --endpoints host:port)`);
  const port = env.MYSQL_TCP_PORT ? Number(env.MYSQL_TCP_PORT) : 3306;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new BadInput(`${WHAT}: MYSQL_TCP_PORT=${env.MYSQL_TCP_PORT} is not a port number`);
  return { name: "mariadb-1", host, port };
}

const found = new WeakMap<RunOnService, Promise<MariadbService>>();

/** The test's server and login, found once (preflight, then the run's start). */
function locate(test: RunOnService): Promise<MariadbService> {
  let f = found.get(test);
  if (!f) found.set(test, (f = find(test)));
  return f;
}

async function find(test: RunOnService): Promise<MariadbService> {
  const servers = test.serverOptions.external ?? [];
  const given = servers.some((s) => s.host !== undefined || s.proxy !== undefined);
  const server = given ? (await placeServers(test.toxiproxy, servers))[0] : serverFromEnv(process.env);
  return { server, login: loginOf(process.env) };
}

const whereOf = (svc: MariadbService): string => `${svc.server.host}:${svc.server.port} as user "${svc.login.user}"`;

/** Why a connection to the user's server failed, naming the server and the user, never the password. */
function refusal(err: unknown, svc: MariadbService): BadInput {
  const e = err as { errno?: number; sqlState?: string; message?: string };
  const why =
    e.errno === 1045
      ? `the server refused the login (${svc.login.password === undefined ? "no password was given: set MYSQL_PWD" : "the password is MYSQL_PWD's"})`
      : typeof e.errno === "number" && e.sqlState
        ? `the server refused the connection: ${e.message} (error ${e.errno})`
        : `no MariaDB server answers there (${e.message ?? String(err)})`;
  return new BadInput(`${WHAT}: ${whereOf(svc)}: ${why}`);
}

/** Run `f` on the user's server as the run's login; a failure to connect is bad input. */
async function ask<T>(svc: MariadbService, f: (c: mysql.Connection) => Promise<T>): Promise<T> {
  let connected = false;
  try {
    return await connectAs(svc.server, { ...svc.login, database: "" }, ADMIN_TIMEOUT_MS, (c) => {
      connected = true;
      return f(c);
    });
  } catch (err) {
    if (connected) throw err;
    throw refusal(err, svc);
  }
}

/** The current user as information_schema's GRANTEE column spells it: 'user'@'host'. */
const GRANTEE = `CONCAT("'", SUBSTRING_INDEX(CURRENT_USER(), '@', 1), "'@'", SUBSTRING_INDEX(CURRENT_USER(), '@', -1), "'")`;
/** Whether the current user holds a privilege on database ? (globally, or by a grant whose pattern matches its name). */
const holds = (privilege: string): string =>
  `(EXISTS (SELECT 1 FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ${GRANTEE} AND PRIVILEGE_TYPE = '${privilege}')
    OR EXISTS (SELECT 1 FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ${GRANTEE} AND PRIVILEGE_TYPE = '${privilege}' AND ? LIKE TABLE_SCHEMA))`;

/**
 * Before anything starts: the server reached as the settings say; the user may
 * create and drop the run's database (globally, or by a grant on a pattern such
 * as `fencecheck\_%`); the server takes writes; with --key-prefix, no database
 * of the run's name there already. Makes nothing.
 */
export async function checkMariadbService(test: RunOnService): Promise<void> {
  const svc = await locate(test);
  const prefix = test.workloadOptions.keyPrefix;
  const db = databaseOf(prefix ?? "fencecheck:check:");
  // Numbers as strings (the connections' bigNumberStrings): "0" is truthy, so each is compared.
  const [[facts]] = await ask(svc, (c) =>
    c.query<Array<{ who: string; may_create: string; may_drop: string; read_only: string; taken: string } & mysql.RowDataPacket>>(
      `SELECT CURRENT_USER() AS who, ${holds("CREATE")} AS may_create, ${holds("DROP")} AS may_drop, @@read_only AS read_only,
         EXISTS (SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?) AS taken`,
      [db, db, db],
    ),
  );
  const at = `${svc.server.host}:${svc.server.port}`;
  const yes = (v: string | number): boolean => Number(v) !== 0;
  const missing = [yes(facts.may_create) ? null : "CREATE", yes(facts.may_drop) ? null : "DROP"].filter((p) => p !== null);
  if (missing.length)
    throw new BadInput(
      `${WHAT}: user ${facts.who} lacks ${missing.join(" and ")} on the run's database (${db} at ${at}), which the run makes for its lock tables and drops at the end: ` +
        `GRANT ALL ON \`fencecheck\\_%\`.* TO ${facts.who.replace(/^(.*)@(.*)$/, "'$1'@'$2'")}, or connect as a user that has it (MYSQL_USER)`,
    );
  if (yes(facts.read_only)) throw new BadInput(`${WHAT}: the server at ${at} is read-only (@@read_only: a replica?) and takes no writes; give the primary`);
  if (prefix !== undefined && yes(facts.taken))
    throw new BadInput(`${WHAT}: --key-prefix ${JSON.stringify(prefix)} names the run's database ${db}, and the server at ${at} already has one of that name; the run makes its own and drops it afterwards, so choose another prefix`);
}

/** The command that drops a database left behind, for the messages that say one was. */
const dropByHand = (svc: MariadbService, db: string): string => `mariadb -h ${svc.server.host} -P ${svc.server.port} -u ${svc.login.user} -p -e 'DROP DATABASE \`${db}\`'`;

/**
 * At the run's start: its database made, and its removal handed to the process
 * group's teardown as soon as it exists (so a start that fails later, an
 * interruption or a failed run removes it too); then the lock tables in it. A
 * database of that name already there is not the run's: the run fails and leaves it.
 */
export async function openMariadbService(ctx: ExternalServiceContext): Promise<OpenService> {
  const svc = await locate(ctx.test);
  const db = databaseOf(ctx.keyPrefix);
  const access: MariadbAccess = { ...svc.login, database: db };
  try {
    await onServer(svc.server, [`CREATE DATABASE ${mysql.escapeId(db)}`], access, ADMIN_TIMEOUT_MS);
  } catch (err) {
    if ((err as { errno?: number }).errno === 1007) throw new Error(`the run's database ${db} is already at ${whereOf(svc)}: not the run's, so it is left alone (choose another --key-prefix)`);
    throw err;
  }
  ctx.started("lock_database", { name: db, host: svc.server.host, port: svc.server.port, user: svc.login.user });
  const remove = removedOnce(
    ctx,
    ["database_dropped", db],
    () => dropRunDatabase(svc.server, access),
    (why) => `could not drop the run's database ${db} at ${whereOf(svc)}: ${why}\n  drop it yourself: ${dropByHand(svc, db)}`,
  );
  await onServer(svc.server, lockTablesSql(db), access, ADMIN_TIMEOUT_MS);
  return { servers: [svc.server], service: { mariadb: access }, remove };
}

/** How long the teardown waits for the run's ended sessions to be gone. */
const SESSIONS_GONE_MS = 5000;

/**
 * The run's database dropped, with its tables and rows, after the run's
 * sessions (the user's connections whose current database it is) are ended and
 * gone: one behind a link gone silent would hold its named locks until the
 * server's wait_timeout (8 hours for a pooled one). The number of rows the
 * tables had; 0 if the database was not there (again: the same answer).
 */
export async function dropRunDatabase(server: { host: string; port: number }, access: MariadbAccess): Promise<number> {
  return connectAs(server, { ...access, database: "" }, ADMIN_TIMEOUT_MS, async (c) => {
    const theirs = `FROM information_schema.PROCESSLIST WHERE DB = ? AND USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1) AND ID <> CONNECTION_ID()`;
    const sessions = async () => ((await c.query<Array<{ id: number } & mysql.RowDataPacket>>(`SELECT ID AS id ${theirs}`, [access.database]))[0]).map((r) => r.id);
    // A session may have ended meanwhile (1094: no such thread).
    for (const id of await sessions()) await c.query(`KILL CONNECTION ?`, [id]).catch(() => {});
    for (const end = Date.now() + SESSIONS_GONE_MS; Date.now() < end && (await sessions()).length > 0; ) await new Promise((r) => setTimeout(r, 50));
    // Those of the lock tables that are there (a start that failed may have made none).
    const [there] = await c.query<Array<{ t: string } & mysql.RowDataPacket>>(`SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?`, [access.database]);
    let rows = 0;
    for (const table of Object.values(lockTables(access.database)))
      if (there.some((r) => table.endsWith(`.${r.t}`))) rows += Number((await c.query<Array<{ n: number } & mysql.RowDataPacket>>(`SELECT COUNT(*) AS n FROM ${table}`))[0][0].n);
    await c.query(`DROP DATABASE IF EXISTS ${mysql.escapeId(access.database)}`);
    return rows;
  });
}

/** removeKeys for a MariaDB the run shares, by its key prefix: its database dropped, as the MYSQL_* variables let the run connect. */
export function removeRunDatabase(nodes: readonly ServerNode[], prefix: string): Promise<number> {
  return dropRunDatabase(nodes[0], { ...loginOf(process.env), database: databaseOf(prefix) });
}
