// A Postgres 15 server made for one run: initdb into data/postgres-1 of the run
// directory (or a directory the postgres user can reach, linked from there), then
// the postmaster as a child process of the run's group on a loopback port of its
// own. Debian's package may run a system cluster on 5432; it is never used. In
// docker mode the postmaster is a container's (backends/postgres/docker/), whose start
// script runs initdb itself the first time: the host then needs no Postgres.
//
// The postmaster is started directly rather than through `pg_ctl start`: pg_ctl
// daemonizes it, and the group (and the reaper after a crash) could then not know
// its pid. Postgres refuses to run as root, so both initdb and the server run as
// the `postgres` user (a setuid of the child, no runuser in between to outlive a
// SIGKILL), and the data directory is theirs. Run by another user than root, both
// run as that user, who owns the run directory.
//
// The backends the postmaster forks for each connection are children of it, each
// in a session of its own (Postgres calls setsid), so a signal to the postmaster
// reaches none of them. A kill (the nemesis', the teardown's) takes them with
// it; after a crash of the runner the reaper kills the postmaster alone, and its
// backends notice its death and exit by themselves. A frozen server needs every
// one of them frozen, and they are then put on the reaper's list until thawed
// (ProcessGroup does all of this for a process started withChildren).
import { join } from "node:path";
import { serverDataDir, systemUser, type ServerUser } from "../../cluster/server-user.ts";
import pg from "pg";
import { sleep } from "../../lib/index.ts";
import { oneServer, type Cluster } from "../../cluster/cluster.ts";
import { logTail, type ProcessGroup } from "../../cluster/processes.ts";
import type { PortPlan } from "../../cluster/ports.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { pgBin, POSTGRES_SERVER } from "./programs.ts";
import { localDeployment, type Deployment } from "../../cluster/deployment.ts";

export { pgBin };

export interface PostgresOptions {
  runDir: string;
  /** fsync on (--pg-durable): what a killed server remembers of its last commits. */
  durable: boolean;
  /** More `-c name=value` settings (the dead-session measurement's keepalives). */
  settings?: Record<string, string>;
  /** Its name in the run (default postgres-1; the resource's own is resource-db). */
  name?: string;
  /** Where it runs (default: a child process of the group). */
  deployment?: Deployment;
}

/** The `postgres` user's ids: Debian's postgresql-15 makes it. */
export const postgresUser = (): ServerUser => systemUser("postgres", "install Debian's postgresql-15 (fencecheck setup --backends postgres)");

/** The connection settings of the run's own server: trust authentication, the superuser. */
export const pgConnection = (node: { host: string; port: number }) => ({ host: node.host, port: node.port, user: "postgres", database: "postgres" });

function serverArgs(dir: string, port: number, opts: PostgresOptions, bindHost: string): string[] {
  const settings: Record<string, string> = {
    // Loopback here; every address inside a container, whose port is published on loopback only.
    listen_addresses: bindHost === "0.0.0.0" ? "*" : bindHost,
    // No Unix socket: a run directory's path can be longer than a socket's
    // (107 bytes), and every client comes over TCP through its proxy anyway.
    unix_socket_directories: "",
    fsync: opts.durable ? "on" : "off",
    // One connection per logical client (up to --concurrency 1000), and the resource's.
    max_connections: "1100",
    shared_buffers: "16MB",
    log_line_prefix: "%m [%p] ",
    ...opts.settings,
  };
  return ["-D", dir, "-p", String(port), ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`])];
}

/** The user the servers run as: postgres when we are root (Postgres refuses root), else ourselves. */
export function serverUser(): ServerUser | undefined {
  return process.getuid?.() === 0 ? postgresUser() : undefined;
}

/** The directory a server keeps its files in, given to the postgres user (cluster/server-user.ts). */
export const postgresDataDir = (group: ProcessGroup, runDir: string, name: string, deployment?: Deployment): string => serverDataDir(group, runDir, name, serverUser(), deployment);

async function initdb(group: ProcessGroup, name: string, dir: string, logFile: string): Promise<void> {
  const proc = await group.spawn({
    name: `${name}-initdb`,
    command: pgBin("initdb"),
    args: ["-D", dir, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"],
    logFile,
    user: serverUser(),
    env: { ...process.env, HOME: dir, LC_ALL: "C" },
  });
  const code = await proc.exited;
  await group.kill(proc.name);
  if (code !== "0") throw new Error(`initdb for ${name} failed (${code}):\n${logTail(logFile)}`);
}

/** Start the postmaster (again, after a kill: same port, same data directory) and wait until it answers. */
export async function startPostmaster(deployment: Deployment, node: ServerNode, dir: string, logFile: string, opts: PostgresOptions): Promise<void> {
  // A container's first start runs initdb first (its script), and the engine may start slowly.
  const limitS = deployment.name === "local" ? 15 : 60;
  const deadline = Date.now() + limitS * 1000;
  const spec = {
    name: node.name,
    program: POSTGRES_SERVER,
    args: serverArgs(dir, node.port, opts, deployment.bindHost),
    dataDir: dir,
    logFile,
    ports: [node.port],
    user: serverUser(),
    withChildren: true,
  };
  for (;;) {
    await deployment.start(spec);
    for (;;) {
      if (!deployment.running(node.name)) break;
      if (await answers(node)) return;
      if (Date.now() > deadline) throw new Error(`${node.name} did not answer on port ${node.port} within ${limitS} s:\n${logTail(logFile)}`);
      await sleep(50);
    }
    await deployment.kill(node.name);
    // After a kill, backends of the old postmaster may still hold its shared
    // memory for a moment; the new one refuses to start until they are gone.
    if (Date.now() > deadline) throw new Error(`${node.name} exited at start (port ${node.port}):\n${logTail(logFile)}`);
    await sleep(100);
  }
}

async function answers(node: ServerNode): Promise<boolean> {
  const c = new pg.Client({ ...pgConnection(node), connectionTimeoutMillis: 1000 });
  c.on("error", () => {});
  try {
    await c.connect();
    await c.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}

export async function startPostgresCluster(group: ProcessGroup, ports: PortPlan, opts: PostgresOptions): Promise<Cluster> {
  const deployment = opts.deployment ?? localDeployment(group);
  const node: ServerNode = { name: opts.name ?? "postgres-1", host: "127.0.0.1", port: await ports.take() };
  const dir = postgresDataDir(group, opts.runDir, node.name, deployment);
  const logFile = join(opts.runDir, "logs", `${node.name}.log`);
  if (deployment.name === "local") await initdb(group, node.name, dir, logFile);
  await startPostmaster(deployment, node, dir, logFile, opts);
  // The postmaster was started withChildren: its backends are frozen and thawed with it.
  return oneServer(deployment, node, () => startPostmaster(deployment, node, dir, logFile, opts), "Postgres");
}
