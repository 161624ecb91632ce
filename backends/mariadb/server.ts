// A MariaDB 10.11 server made for one run: mariadb-install-db into
// data/mariadb-1 of the run directory (or a directory the mysql user can reach,
// linked from there), then mariadbd itself as a child process of the run's
// group on a loopback port of its own. Debian's own service on 3306 is never
// used. In docker mode mariadbd is a container's (backends/mariadb/docker/),
// whose start script runs install-db itself the first time: the host then needs
// no MariaDB.
//
// mariadbd is started directly, not through mysqld_safe (which would restart it
// after the kill nemesis' SIGKILL, behind the run's back, and which the group
// and the reaper could not tell from the server). It refuses to run as root, so
// when we are root both install-db and the server run as the `mysql` user (a
// setuid of the child, no runuser in between to outlive a SIGKILL); run by
// another user, both run as that user. mariadbd is one process with a thread
// per connection: a SIGSTOP freezes every session, a SIGKILL ends them all, so
// unlike the postmaster it needs no withChildren.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { ownedBy, serverDataDir, systemUser, type ServerUser } from "../../cluster/server-user.ts";
import type { RowDataPacket } from "mysql2";
import { sleep } from "../../lib/index.ts";
import { oneServer, type Cluster, type ServerNode } from "../../cluster/cluster.ts";
import { logTail, type ProcessGroup } from "../../cluster/processes.ts";
import type { PortPlan } from "../../cluster/ports.ts";
import { localDeployment, type Deployment } from "../../cluster/deployment.ts";
import { installDb, MARIADB_SERVER } from "./programs.ts";
import { connectAs, RUNS_OWN } from "./session.ts";

export interface MariadbOptions {
  runDir: string;
  /** innodb_flush_log_at_trx_commit=1 and the doublewrite buffer (--mariadb-durable): what a crash of the machine leaves. */
  durable: boolean;
  /** Its name in the run (default mariadb-1; a test's server of "the user's" has another). */
  name?: string;
  /** Where it runs (default: a child process of the group). */
  deployment?: Deployment;
}

/** The `mysql` user's ids: Debian's mariadb-server makes it. */
export const mysqlUser = (): ServerUser => systemUser("mysql", "install Debian's mariadb-server (fencecheck setup --backends mariadb)");

/** The user the server runs as: mysql when we are root (mariadbd refuses root), else ourselves. */
export const serverUser = (): ServerUser | undefined => (process.getuid?.() === 0 ? mysqlUser() : undefined);

/**
 * mariadbd's arguments; --no-defaults first, or /etc/mysql/my.cnf brings in
 * Debian's socket, data directory and logs. The socket and pid file are
 * relative: mariadbd chdirs to its data directory, so they land there and the
 * socket's path stays short (107 bytes at most) however long the run
 * directory's path is. MariaDB cannot turn its socket off; every client comes
 * over TCP through its proxy anyway.
 */
export function serverArgs(dir: string, port: number, durable: boolean, bindHost: string, tmp?: string): string[] {
  return [
    "--no-defaults",
    `--datadir=${dir}`,
    ...(tmp ? [`--tmpdir=${tmp}`] : []),
    `--port=${port}`,
    // Loopback here; every address inside a container, whose port is published on loopback only.
    `--bind-address=${bindHost}`,
    "--socket=mariadbd.sock",
    "--pid-file=mariadbd.pid",
    "--skip-name-resolve",
    "--skip-log-bin",
    // Small: the lock tables are a few rows. 10.11 reserves address space for the
    // largest pool it could grow to (8 TB of VSZ) unless its maximum is given.
    "--innodb-buffer-pool-size=16M",
    "--innodb-buffer-pool-size-max=16M",
    "--innodb-log-file-size=8M",
    "--innodb-log-buffer-size=2M",
    "--key-buffer-size=1M",
    "--aria-pagecache-buffer-size=1M",
    "--query-cache-size=0",
    "--query-cache-type=OFF",
    // 2: each commit written to the kernel at once (a SIGKILL of the server
    // loses nothing), fsync'ed once a second (a crash of the machine may lose the
    // last second): Postgres' fsync=off. 0 would lose acknowledged commits, and a
    // lease row's fences with them, to a mere SIGKILL (measured).
    `--innodb-flush-log-at-trx-commit=${durable ? 1 : 2}`,
    // Only a torn page in a crash of the machine needs it.
    `--innodb-doublewrite=${durable ? "ON" : "OFF"}`,
    // One connection per logical client (up to --concurrency 1000), and the run's own.
    "--max-connections=1100",
  ];
}

/**
 * The server's directory, given to the mysql user (cluster/server-user.ts), and
 * a temporary directory of its own beside it.
 */
function mariadbDataDir(group: ProcessGroup, runDir: string, name: string, deployment: Deployment): string {
  const user = serverUser();
  const dir = serverDataDir(group, runDir, name, user, deployment);
  if (deployment.name === "local") ownedBy(tmpOf(dir), user);
  return dir;
}

/**
 * A local server's temporary directory, beside its data directory (inside it,
 * it would be taken for a database): the system's /tmp is shared by every run's
 * server, and two install-db bootstraps at once there failed (one removed a
 * temporary table file the other made). A container has a /tmp of its own.
 */
const tmpOf = (dir: string): string => `${dir}.tmp`;

/**
 * The system tables, and root@127.0.0.1 (and @localhost, @::1) without a
 * password: `normal` authentication, not unix_socket, and the grant tables
 * loaded (not --skip-grant-tables), so that KILL, privileges and accounts work
 * as in production. The port is on loopback only.
 */
async function installDataDir(group: ProcessGroup, name: string, dir: string, logFile: string): Promise<void> {
  const proc = await group.spawn({
    name: `${name}-install-db`,
    command: installDb(),
    args: ["--no-defaults", `--datadir=${dir}`, `--tmpdir=${tmpOf(dir)}`, "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve", "--innodb-log-file-size=8M", "--innodb-buffer-pool-size=16M"],
    logFile,
    user: serverUser(),
    env: { ...process.env, HOME: dir, LC_ALL: "C" },
  });
  const code = await proc.exited;
  await group.kill(proc.name);
  if (code !== "0") throw new Error(`mariadb-install-db for ${name} failed (${code}):\n${logTail(logFile)}`);
}

const sameDir = (a: string, b: string): boolean => a.replace(/\/+$/, "") === b.replace(/\/+$/, "");

/**
 * The data directory of the server answering at `node`, or null when none
 * answers: ready is a login that answers a query, and it must be ours (a
 * server left on the port by someone else answers too).
 */
async function datadirAt(node: ServerNode): Promise<string | null> {
  try {
    // No database: the lock database is made once the server answers.
    return await connectAs(node, { ...RUNS_OWN, database: "" }, 1000, async (c) => {
      const [rows] = await c.query<Array<{ d: string } & RowDataPacket>>("SELECT @@datadir AS d");
      return String(rows[0].d);
    });
  } catch {
    return null;
  }
}

/** Start mariadbd (again, after a kill: same port, same data directory) and wait until it answers. */
async function startMariadbd(deployment: Deployment, node: ServerNode, dir: string, logFile: string, durable: boolean): Promise<void> {
  // A container's first start runs install-db first (its script), and the engine may start slowly.
  const limitS = deployment.name === "local" ? 15 : 60;
  const deadline = Date.now() + limitS * 1000;
  const spec = { name: node.name, program: MARIADB_SERVER, args: serverArgs(dir, node.port, durable, deployment.bindHost, deployment.name === "local" ? tmpOf(dir) : undefined), dataDir: dir, logFile, ports: [node.port], user: serverUser() };
  await deployment.start(spec);
  for (;;) {
    if (!deployment.running(node.name)) throw new Error(`${node.name} exited at start (port ${node.port}):\n${logTail(logFile)}`);
    const answered = await datadirAt(node);
    if (answered !== null) {
      if (sameDir(answered, dir)) return;
      await deployment.kill(node.name);
      throw new Error(`port ${node.port} of ${node.name} is answered by another MariaDB (its data directory is ${answered})`);
    }
    if (Date.now() > deadline) throw new Error(`${node.name} did not answer on port ${node.port} within ${limitS} s:\n${logTail(logFile)}`);
    await sleep(50);
  }
}

export async function startMariadbCluster(group: ProcessGroup, ports: PortPlan, opts: MariadbOptions): Promise<Cluster> {
  const deployment = opts.deployment ?? localDeployment(group);
  const node: ServerNode = { name: opts.name ?? "mariadb-1", host: "127.0.0.1", port: await ports.take() };
  const dir = mariadbDataDir(group, opts.runDir, node.name, deployment);
  const logFile = join(opts.runDir, "logs", `${node.name}.log`);
  mkdirSync(dirname(logFile), { recursive: true });
  if (deployment.name === "local") await installDataDir(group, node.name, dir, logFile);
  await startMariadbd(deployment, node, dir, logFile, opts.durable);
  // InnoDB's crash recovery runs at the start after a kill (about 0.1 to 0.2 s with an 8 MB redo log).
  return oneServer(deployment, node, () => startMariadbd(deployment, node, dir, logFile, opts.durable), "MariaDB");
}
