// --backend postgres --deploy external: a Postgres of the user's, here one this
// test starts itself with the project's own cluster code and then treats as a
// staging server: password authentication for every role but the superuser, a
// role that owns the database the runs use, one without CREATE on it, and an
// application already there (a schema with rows, and a session holding an
// advisory lock of its own). A run makes a schema of its own, keeps its lock
// tables there, and at the end leaves no schema, table, row, session or
// advisory lock of its own, nor a password in any file, and touches nothing of
// the application's; a missing privilege is refused before anything starts.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { chmodSync, chownSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import { pgConnection, serverUser, startPostgresCluster } from "../server.ts";
import type { ServerNode } from "../../../cluster/cluster.ts";
import { markerKeys, schemaOf, SCHEMA_COMMENT } from "../external.ts";
import { tempRunDir, runCli, eventually, storedRun, filesWith, grantsIn } from "../../../test/helpers.ts";
import { selfSignedCert, type TestCert } from "../../../test/tls-cert.ts";

const SECRET = "not-a-real-password-5c1e";
/** Nothing of the machine's own libpq settings reaches a run of these tests. */
const NO_PG = Object.fromEntries(["PGHOST", "PGHOSTADDR", "PGPORT", "PGUSER", "PGPASSWORD", "PGDATABASE", "PGSSLMODE", "PGSSLROOTCERT", "PGPASSFILE"].map((k) => [k, undefined]));
const STAGING = { ...NO_PG, PGUSER: "fc_staging", PGPASSWORD: SECRET, PGDATABASE: "staging" };
const short = ["--backend", "postgres", "--deploy", "external", "--concurrency", "4", "--workers", "2", "--ttl", "400", "--work", "5", "--rate", "20", "--acquire-timeout", "500"];
const faulted = [...short, "--nemesis", "partition", "--nemesis-interval", "0.6", "--time-limit", "3", "--grace", "2", "--seed", "11"];

let dir: string;
let group: ProcessGroup;
let node: ServerNode;
/** The server's certificate, for localhost: a role that may connect over TLS only checks it. */
let cert: TestCert;
/** The other application's session, holding its advisory lock throughout. */
let app: pg.Client;

/** One statement as the superuser, in `database`. */
async function sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = [], database = "staging"): Promise<T[]> {
  const c = new pg.Client({ ...pgConnection(node), database });
  await c.connect();
  try {
    return (await c.query<T>(text, values)).rows;
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  dir = tempRunDir("fc-external-pg-");
  // mkdtemp makes it 0700, and the server runs as the postgres user.
  chmodSync(dir, 0o755);
  group = new ProcessGroup(dir);
  cert = selfSignedCert("DNS:localhost");
  // Postgres reads its key only if the server's user owns it and no one else may.
  const tls = { ssl_cert_file: join(dir, "server.crt"), ssl_key_file: join(dir, "server.key") };
  writeFileSync(tls.ssl_cert_file, cert.cert);
  writeFileSync(tls.ssl_key_file, cert.key, { mode: 0o600 });
  const user = serverUser();
  if (user) for (const f of Object.values(tls)) chownSync(f, user.uid, user.gid);
  [node] = (await startPostgresCluster(group, new PortPlan(0), { runDir: dir, durable: false, name: "theirs", settings: { ssl: "on", ...tls } })).nodes;
  await sql(`CREATE ROLE fc_staging LOGIN PASSWORD '${SECRET}'`, [], "postgres");
  await sql(`CREATE ROLE fc_reader LOGIN PASSWORD '${SECRET}'`, [], "postgres");
  await sql(`CREATE ROLE fc_tls LOGIN PASSWORD '${SECRET}'`, [], "postgres");
  await sql(`CREATE DATABASE staging OWNER fc_staging`, [], "postgres");
  await sql(`GRANT CREATE ON DATABASE staging TO fc_tls`, [], "postgres");
  // As a staging server is set up: passwords for everyone, the test's superuser
  // aside, and fc_tls only over TLS.
  writeFileSync(
    join(dir, "data", "theirs", "pg_hba.conf"),
    "host all postgres 127.0.0.1/32 trust\nhostssl all fc_tls 127.0.0.1/32 scram-sha-256\nhostnossl all fc_tls 127.0.0.1/32 reject\nhost all all 127.0.0.1/32 scram-sha-256\n",
  );
  await sql(`SELECT pg_reload_conf()`, [], "postgres");
  await sql(`CREATE SCHEMA app; CREATE TABLE app.orders (id int PRIMARY KEY, item text); INSERT INTO app.orders VALUES (1, 'bolts'), (2, 'nuts')`);
  app = new pg.Client({ ...pgConnection(node), database: "staging", application_name: "their-app" });
  await app.connect();
  await app.query(`SELECT pg_advisory_lock(42)`);
}, 30_000);

afterAll(async () => {
  await app?.end().catch(() => {});
  await group?.stopAll();
});

/** What the server has that a run could have left: schemas but the application's and the system's, tables anywhere but app's, sessions and advisory locks but the application's. */
async function leftOnServer() {
  return {
    schemas: (await sql<{ n: string }>(`SELECT nspname AS n FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname NOT IN ('information_schema', 'public', 'app') ORDER BY 1`)).map((r) => r.n),
    tables: (await sql<{ t: string }>(`SELECT schemaname || '.' || tablename AS t FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`)).map((r) => r.t),
    sessions: (await sql<{ a: string }>(`SELECT DISTINCT application_name AS a FROM pg_stat_activity WHERE usename LIKE 'fc\\_%'`)).map((r) => r.a),
    advisory: await sql(`SELECT a.application_name AS app, l.objid::text AS key, l.granted FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE l.locktype = 'advisory'`),
    orders: await sql(`SELECT id, item FROM app.orders ORDER BY id`),
  };
}

/** A run refused as bad input (254), saying `message` and never the password: no store made, nothing on the server. */
async function refusedBeforeStart(args: string[], env: NodeJS.ProcessEnv, message: RegExp): Promise<void> {
  const store = join(tempRunDir("fc-external-pg-bad-"), "s");
  const cli = runCli("test", [...short, ...args, "--time-limit", "1", "--store", store], env);
  expect(await cli.exit, cli.stderr()).toBe(254);
  expect(cli.stderr()).toMatch(message);
  for (const secret of [SECRET, env.PGPASSWORD ?? SECRET]) expect(cli.stderr()).not.toContain(secret);
  expect(existsSync(store)).toBe(false);
  expect(await leftOnServer()).toEqual(untouched);
}

const untouched = {
  schemas: [],
  tables: ["app.orders"],
  sessions: [],
  advisory: [{ app: "their-app", key: "42", granted: true }],
  orders: [
    { id: 1, item: "bolts" },
    { id: 2, item: "nuts" },
  ],
};

describe("--backend postgres --deploy external", () => {
  it("postgres-lease through --endpoints under partitions: VALID with fencing, its schema made and dropped, nothing of the run's left and nothing of theirs touched", async () => {
    const store = tempRunDir("fc-external-pg-");
    const cli = runCli("test", [...faulted, "--client", "postgres-lease", "--endpoints", `${node.host}:${node.port}`, "--store", store], STAGING);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    expect(cli.stdout()).toMatch(/^VALID/m);
    const { dir: runDir, run, events } = storedRun(store);
    expect(run.key_prefix).toMatch(/^fencecheck:\d{8}T\d{6}\.\d{3}Z:$/);
    const schema = schemaOf(run.key_prefix);
    expect(schema).toMatch(/^fencecheck_\d{8}t\d{6}_\d{3}z$/);
    expect(run.lock_schema).toEqual({ name: schema, host: node.host, port: node.port, user: "fc_staging", database: "staging" });
    expect(run.schema_dropped).toBe(schema);
    // The lease rows were in the run's schema when it was dropped.
    expect(run.keys_removed).toBeGreaterThan(0);
    expect(grantsIn(events).length).toBeGreaterThan(3);
    expect(events.some((e) => e.f === "start-partition")).toBe(true);
    expect(await leftOnServer()).toEqual(untouched);
    expect(filesWith(runDir, SECRET)).toEqual([]);
  });

  it("postgres-advisory found by PGHOST and PGPORT, under partitions: VALID with fencing, every advisory lock of the run gone at the end", async () => {
    const store = tempRunDir("fc-external-pg-");
    const cli = runCli("test", [...faulted, "--client", "postgres-advisory", "--store", store], { ...STAGING, PGHOST: node.host, PGPORT: String(node.port) });
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    expect(cli.stdout()).toMatch(/^VALID/m);
    const { dir: runDir, run, events } = storedRun(store);
    expect(run.servers).toEqual([{ name: "postgres-1", host: node.host, port: node.port }]);
    expect(run.schema_dropped).toBe(schemaOf(run.key_prefix));
    expect(run.keys_removed).toBeGreaterThan(0);
    expect(grantsIn(events).length).toBeGreaterThan(3);
    expect(await leftOnServer()).toEqual(untouched);
    expect(filesWith(runDir, SECRET)).toEqual([]);
  });

  it("a run interrupted (SIGINT, as Ctrl-C) drops its schema and ends its sessions too", async () => {
    const store = tempRunDir("fc-external-pg-");
    const cli = runCli("test", [...short, "--client", "postgres-advisory", "--endpoints", `${node.host}:${node.port}`, "--nemesis", "none", "--time-limit", "60", "--store", store], STAGING);
    const schema = await eventually(async () => {
      const { run } = storedRun(store);
      return run.workers ? (run.lock_schema.name as string) : null;
    });
    expect((await leftOnServer()).schemas).toEqual([schema]);
    process.kill(cli.child.pid!, "SIGINT");
    await cli.exit;
    expect(storedRun(store).run.schema_dropped).toBe(schema);
    expect(await leftOnServer()).toEqual(untouched);
  });

  it("a schema left by a run that is gone (its marker free) is dropped by the next run; a live run's, and a fencecheck_* schema of the user's, are left alone, and so is another user's", async () => {
    const note = pg.escapeLiteral(SCHEMA_COMMENT);
    await sql(`CREATE SCHEMA fencecheck_gone AUTHORIZATION fc_staging; COMMENT ON SCHEMA fencecheck_gone IS ${note}; CREATE TABLE fencecheck_gone.fencecheck_leases (name text); ALTER TABLE fencecheck_gone.fencecheck_leases OWNER TO fc_staging`);
    await sql(`CREATE SCHEMA fencecheck_live AUTHORIZATION fc_staging; COMMENT ON SCHEMA fencecheck_live IS ${note}`);
    await sql(`CREATE SCHEMA fencecheck_theirs AUTHORIZATION fc_staging`);
    // Gone too, but another user's: theirs to sweep.
    await sql(`CREATE SCHEMA fencecheck_readers AUTHORIZATION fc_reader; COMMENT ON SCHEMA fencecheck_readers IS ${note}`);
    const live = new pg.Client({ ...pgConnection(node), database: "staging" });
    await live.connect();
    try {
      await live.query(`SELECT pg_advisory_lock($1, $2)`, markerKeys("fencecheck_live"));
      const store = tempRunDir("fc-external-pg-");
      const cli = runCli("test", [...short, "--endpoints", `${node.host}:${node.port}`, "--nemesis", "none", "--time-limit", "1", "--store", store], STAGING);
      expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
      expect(storedRun(store).run.swept_schemas, cli.stderr()).toEqual(["fencecheck_gone"]);
      expect((await leftOnServer()).schemas).toEqual(["fencecheck_live", "fencecheck_readers", "fencecheck_theirs"]);
    } finally {
      await live.end();
      await sql(`DROP SCHEMA IF EXISTS fencecheck_gone CASCADE; DROP SCHEMA IF EXISTS fencecheck_live CASCADE; DROP SCHEMA IF EXISTS fencecheck_theirs CASCADE; DROP SCHEMA IF EXISTS fencecheck_readers CASCADE`);
    }
    expect(await leftOnServer()).toEqual(untouched);
  });

  it("TLS checked against PGSSLROOTCERT for the server's own name (PGSSLMODE=verify-full), through the run's proxies on loopback", async () => {
    const store = tempRunDir("fc-external-pg-");
    const env = { ...STAGING, PGUSER: "fc_tls", PGSSLMODE: "verify-full", PGSSLROOTCERT: cert.certFile };
    const cli = runCli("test", [...short, "--client", "postgres-advisory", "--endpoints", `localhost:${node.port}`, "--nemesis", "none", "--time-limit", "2", "--store", store], env);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const { run, events } = storedRun(store);
    expect(run.lock_schema.user).toBe("fc_tls");
    expect(grantsIn(events).length).toBeGreaterThan(3);
    expect(await leftOnServer()).toEqual(untouched);
  });

  it("a certificate not for the name dialled (verify-full): refused (254) before anything starts, naming it; nothing made, no store", async () => {
    const env = { ...STAGING, PGSSLMODE: "verify-full", PGSSLROOTCERT: cert.certFile };
    await refusedBeforeStart(
      ["--endpoints", `127.0.0.1:${node.port}`],
      env,
      /127\.0\.0\.1:\d+ as user "fc_staging": its certificate is not accepted under PGSSLMODE=verify-full with PGSSLROOTCERT's authorities: .*127\.0\.0\.1/,
    );
  });

  it.each([
    ["a user without CREATE on the database", { ...STAGING, PGUSER: "fc_reader" }, /user "fc_reader" lacks the CREATE privilege on database "staging" at 127\.0\.0\.1:\d+, and the run needs it to make a schema of its own there/],
    ["a wrong password", { ...STAGING, PGPASSWORD: "wrong-password-0" }, /127\.0\.0\.1:\d+ as user "fc_staging": the server refused the password \(PGPASSWORD\)/],
    ["no password", { ...STAGING, PGPASSWORD: undefined }, /127\.0\.0\.1:\d+ as user "fc_staging": the server asks for a password, and PGPASSWORD is not set/],
    ["a database that is not there", { ...STAGING, PGDATABASE: "nowhere" }, /as user "fc_staging": there is no database "nowhere"/],
  ])("%s: refused (254) before anything starts, naming it; nothing made, no store", async (_what, env, message) => {
    await refusedBeforeStart(["--endpoints", `${node.host}:${node.port}`], env, message);
  });

  it.each([
    ["a port nothing listens on", { ...STAGING, PGHOST: "127.0.0.1", PGPORT: "1" }, /127\.0\.0\.1:1 as user "fc_staging": no Postgres server answers there \(.*ECONNREFUSED/],
    ["PGPORT not a port", { ...STAGING, PGPORT: "fivefourthreetwo" }, /PGPORT=fivefourthreetwo is not a port number/],
    ["PGHOST a socket directory", { ...STAGING, PGHOST: "/var/run/postgresql" }, /PGHOST=\/var\/run\/postgresql is a Unix socket's directory/],
    ["PGSSLMODE prefer", { ...STAGING, PGHOST: "127.0.0.1", PGSSLMODE: "prefer" }, /PGSSLMODE=prefer asks to try TLS and fall back to plain/],
  ])("%s: refused (254), nothing stored", async (_what, env, message) => {
    await refusedBeforeStart([], env, message);
  });

  it("schemaOf: an identifier of at most 63 bytes, fencecheck_ first, told apart by a hash where cut", () => {
    expect(schemaOf("fencecheck:20250101T120000.000Z:")).toBe("fencecheck_20250101t120000_000z");
    expect(schemaOf("Team-A/locks:")).toBe("fencecheck_team_a_locks");
    const long = schemaOf(`${"x".repeat(80)}:1`);
    expect(long.length).toBe(63);
    expect(long).not.toBe(schemaOf(`${"x".repeat(80)}:2`));
  });
});
