// --backend mariadb --deploy external: a MariaDB of the user's, here one this test
// starts itself with the backend's own server code and then treats as a staging
// server: a user with a password who may make databases named fencecheck_*, one
// who may not, and an application already there (a database with rows, and a
// session holding a named lock of its own). A run makes a database of its own,
// keeps its lock tables there, and at the end leaves no database, session or
// named lock of its own, nor the password in any file, and touches nothing of
// the application's; what is missing is refused before anything starts.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { chmodSync, existsSync } from "node:fs";
import { join } from "node:path";
import mysql from "mysql2/promise";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import type { ServerNode } from "../../../cluster/cluster.ts";
import { startMariadbCluster } from "../server.ts";
import { connectionConfig } from "../session.ts";
import { databaseOf } from "../external.ts";
import { filesWith, runCli, storedRun, tempRunDir, grantsIn } from "../../../test/helpers.ts";

const SECRET = "not-a-real-password-7d2a";
/** Nothing of the machine's own client settings reaches a run of these tests. */
const NO_MYSQL = Object.fromEntries(["MYSQL_HOST", "MYSQL_TCP_PORT", "MYSQL_USER", "MYSQL_PWD"].map((k) => [k, undefined]));
const STAGING = { ...NO_MYSQL, MYSQL_USER: "fc_staging", MYSQL_PWD: SECRET };
const short = ["--backend", "mariadb", "--deploy", "external", "--concurrency", "4", "--workers", "2", "--ttl", "400", "--work", "5", "--rate", "20", "--acquire-timeout", "500"];
const faulted = [...short, "--nemesis", "partition", "--nemesis-interval", "0.6", "--time-limit", "3", "--grace", "2", "--seed", "11"];

let group: ProcessGroup;
let node: ServerNode;
/** The other application's session, holding its named lock throughout. */
let app: mysql.Connection;

const sql = async <T = unknown>(text: string, values: unknown[] = []): Promise<T> => {
  const c = await mysql.createConnection(connectionConfig(node, { user: "root", database: "" }, 5000));
  try {
    return (await c.query(text, values))[0] as T;
  } finally {
    await c.end();
  }
};

beforeAll(async () => {
  const dir = tempRunDir("fc-external-mariadb-");
  // mkdtemp makes it 0700, and the server runs as the mysql user.
  chmodSync(dir, 0o755);
  group = new ProcessGroup(dir);
  [node] = (await startMariadbCluster(group, new PortPlan(0), { runDir: dir, durable: false, name: "theirs" })).nodes;
  for (const s of [
    `CREATE USER fc_staging@'%' IDENTIFIED BY '${SECRET}'`,
    "GRANT ALL ON `fencecheck\\_%`.* TO fc_staging@'%'",
    `CREATE USER fc_reader@'%' IDENTIFIED BY '${SECRET}'`,
    "CREATE DATABASE app",
    "CREATE TABLE app.orders (id INT PRIMARY KEY, item VARCHAR(20))",
    "INSERT INTO app.orders VALUES (1, 'bolts'), (2, 'nuts')",
  ])
    await sql(s);
  app = await mysql.createConnection(connectionConfig(node, { user: "root", database: "app" }, 5000));
  await app.query("SELECT GET_LOCK('their-lock', 0)");
}, 30_000);

afterAll(async () => {
  await app?.end().catch(() => {});
  await group?.stopAll();
});

/** What the server has that a run could have left: databases but the system's and the application's, the staging user's sessions, named locks, the application's rows. */
async function leftOnServer() {
  return {
    databases: (await sql<Array<{ d: string }>>("SELECT SCHEMA_NAME AS d FROM information_schema.SCHEMATA WHERE SCHEMA_NAME NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys', 'app') ORDER BY 1")).map((r) => r.d),
    sessions: Number((await sql<Array<{ n: string }>>("SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER LIKE 'fc\\_%'"))[0].n),
    locks: await sql("SELECT IS_USED_LOCK('their-lock') IS NOT NULL AS theirs"),
    orders: await sql("SELECT id, item FROM app.orders ORDER BY id"),
  };
}

const untouched = { databases: [], sessions: 0, locks: [{ theirs: 1 }], orders: [{ id: 1, item: "bolts" }, { id: 2, item: "nuts" }] };

describe("--backend mariadb --deploy external", () => {
  it("mariadb-get-lock through --endpoints and mariadb-lease found by MYSQL_HOST and MYSQL_TCP_PORT, under partitions: VALID fenced, each database made and dropped, nothing of theirs touched", async () => {
    const stores = [tempRunDir("fc-external-mariadb-"), tempRunDir("fc-external-mariadb-")];
    const runs = [
      runCli("test", [...faulted, "--client", "mariadb-get-lock", "--endpoints", `${node.host}:${node.port}`, "--store", stores[0]], STAGING),
      runCli("test", [...faulted, "--client", "mariadb-lease", "--store", stores[1]], { ...STAGING, MYSQL_HOST: node.host, MYSQL_TCP_PORT: String(node.port) }),
    ];
    for (const cli of runs) {
      expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
      expect(cli.stdout()).toMatch(/^VALID/m);
    }
    for (const store of stores) {
      const { dir, run, events } = storedRun(store);
      const db = databaseOf(run.key_prefix);
      expect(db).toMatch(/^fencecheck_\d{8}t\d{6}_\d{3}z$/);
      expect(run.lock_database).toEqual({ name: db, host: node.host, port: node.port, user: "fc_staging" });
      expect(run.database_dropped).toBe(db);
      expect(run.keys_removed).toBeGreaterThan(0);
      expect(grantsIn(events).length).toBeGreaterThan(3);
      expect(events.some((e) => e.f === "start-partition")).toBe(true);
      expect(filesWith(dir, SECRET)).toEqual([]);
    }
    expect(await leftOnServer()).toEqual(untouched);
  });

  it.concurrent.each<[string, NodeJS.ProcessEnv, RegExp]>([
    ["a user who may not make the run's database", { ...STAGING, MYSQL_USER: "fc_reader" }, /user fc_reader@% lacks CREATE and DROP on the run's database \(fencecheck_check at 127\.0\.0\.1:\d+\).*GRANT ALL ON `fencecheck\\_%`\.\* TO 'fc_reader'@'%'/],
    ["a wrong password", { ...STAGING, MYSQL_PWD: "wrong-password-0" }, /127\.0\.0\.1:\d+ as user "fc_staging": the server refused the login \(the password is MYSQL_PWD's\)/],
    ["no password", { ...STAGING, MYSQL_PWD: undefined }, /as user "fc_staging": the server refused the login \(no password was given: set MYSQL_PWD\)/],
    ["a port nothing listens on", { ...STAGING, MYSQL_HOST: "127.0.0.1", MYSQL_TCP_PORT: "1" }, /127\.0\.0\.1:1 as user "fc_staging": no MariaDB server answers there \(.*ECONNREFUSED/],
    ["MYSQL_TCP_PORT not a port", { ...STAGING, MYSQL_TCP_PORT: "threethree" }, /MYSQL_TCP_PORT=threethree is not a port number/],
  ])("%s: refused (254) before anything starts, naming it, never the password; nothing made, no store", async (_what, env, message) => {
    const store = join(tempRunDir("fc-external-mariadb-bad-"), "s");
    const endpoints = env.MYSQL_HOST || env.MYSQL_TCP_PORT ? [] : ["--endpoints", `${node.host}:${node.port}`];
    const cli = runCli("test", [...short, ...endpoints, "--time-limit", "1", "--store", store], env);
    expect(await cli.exit, cli.stderr()).toBe(254);
    expect(cli.stderr()).toMatch(message);
    expect(cli.stderr()).not.toContain(SECRET);
    expect(existsSync(store)).toBe(false);
    expect((await leftOnServer()).databases).toEqual([]);
  });

  it("databaseOf: an identifier of at most 64 characters, fencecheck_ first, told apart by a hash where cut", () => {
    expect(databaseOf("fencecheck:20250101T120000.000Z:")).toBe("fencecheck_20250101t120000_000z");
    expect(databaseOf("Team-A/locks:")).toBe("fencecheck_team_a_locks");
    const long = databaseOf(`${"x".repeat(80)}:1`);
    expect(long.length).toBe(64);
    expect(long).not.toBe(databaseOf(`${"x".repeat(80)}:2`));
  });
});
