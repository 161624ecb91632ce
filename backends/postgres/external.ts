// --backend postgres --deploy external: a run on a Postgres of the user's (a
// staging server). Where it is comes from --endpoints, or else PGHOST and
// PGPORT; whom the run connects as from the other PG* variables, read here as
// libpq reads them and handed to the workers over IPC (never written down).
// The run keeps its lock tables in a schema of its own, named after its key
// prefix, made at the start and dropped by the process group's teardown (so
// also when the run fails or is interrupted), once the run's sessions, and with
// them its advisory locks, are ended; it touches nothing else there. Before
// anything starts the server is asked whether the run may make that schema
// (CREATE on the database): a no is bad input (254) naming the privilege, the
// user and the database, rather than a run that fails half-way through starting.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";
import { BadInput } from "../../lib/index.ts";
import { placeServers } from "../../cluster/external-proxies.ts";
import type { PlacedServer } from "../../cluster/external.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { lockTables, lockTablesSql, pgConfig, sqlState } from "./session.ts";
import { advisoryKeys } from "./advisory.ts";
import type { PostgresAccess } from "./session.ts";
import { onServer } from "./start.ts";
import { removedOnce, type ExternalServiceContext, type OpenService } from "../../core/index.ts";
import type { RunOnService } from "../../core/index.ts";

/** How messages name the run. */
const WHAT = "--backend postgres --deploy external";
const ADMIN_TIMEOUT_MS = 10_000;
/** Postgres' identifiers: at most NAMEDATALEN - 1 bytes. */
const MAX_IDENTIFIER = 63;

/** Whom the run connects as, from the PG* variables: everything but the run's own schema. */
export type Login = Omit<PostgresAccess, "schema" | "applicationName">;

/** The user's server as the run reaches it, and whom it connects as. */
interface PostgresService {
  server: PlacedServer;
  login: Login;
}

/**
 * The run's schema: its key prefix as a lower-case identifier that starts with
 * fencecheck_ (fencecheck:20250101T120000.000Z: gives
 * fencecheck_20250101t120000_000z), cut to 63 bytes with a hash of the whole
 * prefix where it is longer, so two long prefixes do not meet in one name.
 */
export function schemaOf(prefix: string): string {
  let name = prefix.toLowerCase().replace(/[^a-z0-9_]+/g, "_").replace(/^_+|_+$/g, "");
  if (!/^fencecheck(_|$)/.test(name)) name = name ? `fencecheck_${name}` : "fencecheck";
  if (name.length <= MAX_IDENTIFIER) return name;
  const hash = createHash("sha256").update(prefix).digest("hex").slice(0, 8);
  return `${name.slice(0, MAX_IDENTIFIER - hash.length - 1)}_${hash}`;
}

/** libpq's sslmode values, and what the run does with each (node-postgres cannot try TLS and fall back to plain). */
const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] as const;

/**
 * Whom the run connects as: PGUSER (else postgres), PGPASSWORD, PGDATABASE
 * (else the user's name, as libpq), PGSSLMODE and PGSSLROOTCERT. `host` is the
 * server's own name, which a verify-full certificate must carry.
 */
export function loginOf(env: NodeJS.ProcessEnv, host: string): Login {
  const user = env.PGUSER || "postgres";
  const login: Login = { user, database: env.PGDATABASE || user, ...(env.PGPASSWORD ? { password: env.PGPASSWORD } : {}) };
  const mode = env.PGSSLMODE || "disable";
  if (!(SSL_MODES as readonly string[]).includes(mode)) throw new BadInput(`${WHAT}: PGSSLMODE=${mode} is none of ${SSL_MODES.join(", ")}`);
  if (mode === "disable") return login;
  if (mode === "allow" || mode === "prefer")
    throw new BadInput(
      `${WHAT}: PGSSLMODE=${mode} asks to try TLS and fall back to plain (or the other way), which fencecheck's Postgres client (node-postgres) cannot do; ` +
        `set PGSSLMODE=disable, or require (verify-ca, verify-full) for TLS`,
    );
  const file = env.PGSSLROOTCERT;
  let ca: string | undefined;
  // "system" (libpq 16's word) and unset: Node's own certificate authorities.
  if (mode !== "require" && file && file !== "system") {
    try {
      ca = readFileSync(file, "utf8");
    } catch (err) {
      throw new BadInput(`${WHAT}: PGSSLROOTCERT=${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  return { ...login, tls: { mode: mode as "require" | "verify-ca" | "verify-full", host, ...(ca !== undefined ? { ca } : {}) } };
}

/** postgres-1 at PGHOST and PGPORT (localhost and 5432 when unset): one host, over TCP. */
export function serverFromEnv(env: NodeJS.ProcessEnv): PlacedServer {
  const host = env.PGHOST || "localhost";
  if (host.startsWith("/") || host.startsWith("@"))
    throw new BadInput(`${WHAT}: PGHOST=${host} is a Unix socket's directory; the run's clients reach the server over TCP through its fault proxy: give a host name or address (or --endpoints host:port)`);
  if (host.includes(",")) throw new BadInput(`${WHAT}: PGHOST=${host} names several hosts; give one (or --endpoints host:port)`);
  const port = env.PGPORT ? Number(env.PGPORT) : 5432;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new BadInput(`${WHAT}: PGPORT=${env.PGPORT} is not a port number`);
  return { name: "postgres-1", host, port };
}

const found = new WeakMap<RunOnService, Promise<PostgresService>>();

/** The test's server and login, found once (preflight, then the run's start). */
function locate(test: RunOnService, env: NodeJS.ProcessEnv = process.env): Promise<PostgresService> {
  let f = found.get(test);
  if (!f) found.set(test, (f = find(test, env)));
  return f;
}

async function find(test: RunOnService, env: NodeJS.ProcessEnv): Promise<PostgresService> {
  const servers = test.serverOptions.external ?? [];
  // --endpoints gave an address, or a proxy of the user's in front of one; else the environment says.
  const given = servers.some((s) => s.host !== undefined || s.proxy !== undefined);
  const server = given ? (await placeServers(test.toxiproxy, servers))[0] : serverFromEnv(env);
  return { server, login: loginOf(env, server.host) };
}

const whereOf = (svc: PostgresService): string => `${svc.server.host}:${svc.server.port} as user "${svc.login.user}"`;

/** Why a connection of the run's to the user's server failed, in words that name the server and the user, never the password. */
function refusal(err: unknown, svc: PostgresService): BadInput {
  const state = sqlState(err);
  const message = String((err as Error)?.message ?? err);
  const { user, database, tls } = svc.login;
  const why =
    state === "28P01"
      ? `the server refused the password (${svc.login.password === undefined ? "none was given: set PGPASSWORD" : "PGPASSWORD"})`
      : /client password must be a string/.test(message)
        ? "the server asks for a password, and PGPASSWORD is not set"
        : state === "3D000"
          ? `there is no database "${database}" (PGDATABASE, else the user's name)`
          : state !== undefined
            ? `the server refused the connection: ${message} (SQLSTATE ${state})`
            : /does not support SSL/.test(message)
              ? `PGSSLMODE=${tls?.mode} asks for TLS, and the server offers none`
              : tls && /CERT|SIGNATURE|ERR_TLS/.test(String((err as { code?: unknown })?.code))
                ? `its certificate is not accepted under PGSSLMODE=${tls.mode}${tls.ca === undefined ? " with Node's own certificate authorities (PGSSLROOTCERT names yours)" : " with PGSSLROOTCERT's authorities"}: ${message}`
                : `no Postgres server answers there (${message})`;
  return new BadInput(`${WHAT}: ${whereOf(svc)}: ${why}`);
}

/** Run `f` on the user's server as the run's login; a failure to connect is bad input. */
async function ask<T>(svc: PostgresService, f: (c: pg.Client) => Promise<T>): Promise<T> {
  let connected = false;
  try {
    const asked = (c: pg.Client): Promise<T> => {
      connected = true;
      return f(c);
    };
    return await onServer(svc.server, asked, ADMIN_TIMEOUT_MS, { ...svc.login, schema: "", applicationName: "fencecheck" });
  } catch (err) {
    if (connected) throw err;
    throw refusal(err, svc);
  }
}

interface Facts {
  role: string;
  database: string;
  may_create: boolean;
  standby: boolean;
  version: number;
  taken: boolean;
}

/**
 * Before anything starts: the server reached as the settings say; the user may
 * make a schema in the database (CREATE on it); the server takes writes (no
 * standby); postgres-advisory's idle_session_timeout is there (Postgres 14);
 * with --key-prefix, no schema of the run's name there already. Makes nothing.
 */
export async function checkPostgresService(test: RunOnService): Promise<void> {
  const svc = await locate(test);
  const prefix = test.workloadOptions.keyPrefix;
  const facts = await ask(svc, async (c) => {
    const r = await c.query<Facts>(
      `SELECT current_user AS role, current_database() AS database,
         has_database_privilege(current_user, current_database(), 'CREATE') AS may_create,
         pg_is_in_recovery() AS standby, current_setting('server_version_num')::int AS version,
         CASE WHEN $1::text = '' THEN false ELSE to_regnamespace($1) IS NOT NULL END AS taken`,
      [prefix === undefined ? "" : pg.escapeIdentifier(schemaOf(prefix))],
    );
    return r.rows[0];
  });
  const at = `${svc.server.host}:${svc.server.port}`;
  if (!facts.may_create)
    throw new BadInput(
      `${WHAT}: user "${facts.role}" lacks the CREATE privilege on database "${facts.database}" at ${at}, and the run needs it to make a schema of its own there (dropped at the end): ` +
        `GRANT CREATE ON DATABASE ${pg.escapeIdentifier(facts.database)} TO ${pg.escapeIdentifier(facts.role)}, or connect as a user that has it (PGUSER)`,
    );
  if (facts.standby) throw new BadInput(`${WHAT}: the server at ${at} is a standby (in recovery) and takes no writes; give the primary`);
  if (test.client === "postgres-advisory" && facts.version < 140000)
    throw new BadInput(`${WHAT}: --client postgres-advisory needs Postgres 14 or later (it bounds a session by idle_session_timeout), and the server at ${at} is ${facts.version}`);
  if (facts.taken)
    throw new BadInput(
      `${WHAT}: --key-prefix ${JSON.stringify(prefix)} names the run's schema ${schemaOf(prefix!)}, and database "${facts.database}" at ${at} already has one of that name ` +
        `(someone else's, or a killed run's: ${dropByHand(svc, schemaOf(prefix!))}); the run makes its own and drops it afterwards, so choose another prefix`,
    );
}

/**
 * What a run writes on the schema it makes. A runner killed outright (SIGKILL)
 * never drops its schema; a later run drops every schema that says this and
 * whose run is gone: its marker free.
 */
export const SCHEMA_COMMENT = "made by a fencecheck run: dropped at its end, or by a later run once that run is gone";

/**
 * The marker of a run's schema: an advisory lock of that key, held by a session
 * of the runner's own for as long as the run goes on. A session ends with the
 * process that holds its connection (the server sees the connection close, or
 * finds it dead by its keepalives), so a marker the sweep can take is a run that
 * is gone. Distinct from every lock key of the runs (those hash the lock names).
 */
export const markerKeys = (schema: string): [number, number] => advisoryKeys(`fencecheck run marker:${schema}`);

/**
 * Every schema of a run that is gone, dropped (its sessions ended first, as at a
 * run's own end); the names. One the user may not drop is left, and said.
 */
async function sweepSchemas(svc: PostgresService, own: string, warn: (line: string) => void): Promise<string[]> {
  const { server, login } = svc;
  const admin: PostgresAccess = { ...login, schema: own, applicationName: `${own}~sweep` };
  const candidates = await onServer(
    server,
    async (c) =>
      (await c.query<{ n: string }>(
        // The user's own only: another user's runs are theirs to sweep.
        `SELECT nspname AS n FROM pg_namespace WHERE obj_description(oid, 'pg_namespace') = $1 AND nspname <> $2 AND pg_get_userbyid(nspowner) = current_user ORDER BY 1`,
        [SCHEMA_COMMENT, own],
      )).rows.map(
        (r) => r.n,
      ),
    ADMIN_TIMEOUT_MS,
    admin,
  );
  const swept: string[] = [];
  for (const schema of candidates) {
    const gone = await onServer(server, async (c) => (await c.query<{ free: boolean }>(`SELECT pg_try_advisory_lock($1, $2) AS free`, markerKeys(schema))).rows[0].free, ADMIN_TIMEOUT_MS, admin);
    // Taken by that one-statement session, the lock went with it: a run starting
    // under that prefix now would be refused anyway (its schema is there).
    if (!gone) continue;
    try {
      await dropRunSchema(server, { ...login, schema, applicationName: schema });
      swept.push(schema);
    } catch (err) {
      warn(`fencecheck: could not drop ${schema}, left at ${whereOf(svc)} by a run that is gone: ${(err as Error).message}\n  drop it yourself: ${dropByHand(svc, schema)}`);
    }
  }
  return swept;
}

/** The command that drops a schema left behind, for the messages that say one was. */
const dropByHand = (svc: PostgresService, schema: string): string =>
  `psql -h ${svc.server.host} -p ${svc.server.port} -U ${svc.login.user} -d ${svc.login.database} -c 'DROP SCHEMA ${pg.escapeIdentifier(schema)} CASCADE'`;

/**
 * At the run's start: its schema made, and its removal handed to the process
 * group's teardown as soon as it exists (so a start that fails later, an
 * interruption, or a failed run removes it too); then the lock tables in it. A
 * schema of that name already there is not the run's: the run fails and leaves it.
 */
export async function openPostgresService(ctx: ExternalServiceContext): Promise<OpenService> {
  const svc = await locate(ctx.test);
  const schema = schemaOf(ctx.keyPrefix);
  // The run's sessions carry its schema's name, which the teardown ends them by.
  const access: PostgresAccess = { ...svc.login, schema, applicationName: schema };
  const { server, login } = svc;
  // The run's marker, taken before its schema exists (a sweep must never find
  // the schema without it) and held until the schema is dropped.
  const marker = new pg.Client(pgConfig(server, { ...access, applicationName: `${schema}~run` }, ADMIN_TIMEOUT_MS));
  marker.on("error", () => {});
  const release = (): Promise<void> => marker.end().catch(() => {});
  ctx.group.onStop(release);
  await marker.connect();
  await marker.query(`SELECT pg_advisory_lock($1, $2)`, markerKeys(schema));
  // Preflight has connected already: a failure now is the run's, not bad input.
  await onServer(
    server,
    async (c) => {
      try {
        await c.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
        await c.query(`COMMENT ON SCHEMA ${pg.escapeIdentifier(schema)} IS ${pg.escapeLiteral(SCHEMA_COMMENT)}`);
      } catch (err) {
        await release();
        if (sqlState(err) === "42P06") throw new Error(`the run's schema ${schema} is already in database "${login.database}" at ${whereOf(svc)}: not the run's, so it is left alone (choose another --key-prefix)`);
        throw err;
      }
    },
    ADMIN_TIMEOUT_MS,
    access,
  );
  ctx.started("lock_schema", { name: schema, host: server.host, port: server.port, user: login.user, database: login.database });
  const remove = removedOnce(
    ctx,
    ["schema_dropped", schema],
    () => dropRunSchema(server, access).finally(release),
    (why) => `could not drop the run's schema ${schema} at ${whereOf(svc)}: ${why}\n  drop it yourself: ${dropByHand(svc, schema)}`,
  );
  ctx.started("swept_schemas", await sweepSchemas(svc, schema, (line) => process.stderr.write(line + "\n")));
  await onServer(server, (c) => c.query(lockTablesSql(schema)), ADMIN_TIMEOUT_MS, access);
  return { servers: [server], service: { postgres: access }, remove };
}

/** How long the teardown waits for the run's ended sessions to be gone. */
const SESSIONS_GONE_MS = 5000;

/**
 * The run's schema dropped, with its tables and rows, after the run's sessions
 * (named by `access.applicationName`) are ended and gone: a session the server
 * has not yet found dead (behind a link that went silent) would otherwise hold
 * its advisory locks on. The number of rows the tables had; 0 if the schema was
 * not there (again: the same answer).
 */
export async function dropRunSchema(server: { host: string; port: number }, access: PostgresAccess): Promise<number> {
  return onServer(
    server,
    async (c) => {
      const theirs = `FROM pg_stat_activity WHERE application_name = $1 AND usename = current_user AND pid <> pg_backend_pid()`;
      await c.query(`SELECT pg_terminate_backend(pid) ${theirs}`, [access.applicationName]);
      for (const end = Date.now() + SESSIONS_GONE_MS; Date.now() < end; await new Promise((r) => setTimeout(r, 50)))
        if ((await c.query<{ n: number }>(`SELECT count(*)::int AS n ${theirs}`, [access.applicationName])).rows[0].n === 0) break;
      let rows = 0;
      for (const table of Object.values(lockTables(access.schema)))
        if ((await c.query<{ there: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS there`, [table])).rows[0].there)
          rows += (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;
      await c.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(access.schema)} CASCADE`);
      return rows;
    },
    ADMIN_TIMEOUT_MS,
    access,
  );
}

/** removeKeys for a Postgres the run shares, by its key prefix: its schema dropped, as the PG* variables let the run connect. */
export function removeRunSchema(nodes: readonly ServerNode[], prefix: string): Promise<number> {
  const schema = schemaOf(prefix);
  return dropRunSchema(nodes[0], { ...loginOf(process.env, nodes[0].host), schema, applicationName: schema });
}
