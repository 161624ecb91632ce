// pgbouncer (Debian's 1.18) in front of the run's Postgres, in transaction
// pooling: each transaction of a client runs on whichever server connection is
// free, so session state (a session advisory lock, a SET) stays behind on a
// server connection that other clients' transactions then use. That is the
// pitfall the P1 scenario shows; the pool is one server connection so that
// every client's transactions share it, and the outcome does not depend on timing.
// In docker mode it is a container of the Postgres image (backends/postgres/docker/), and
// reaches the server over the run's network by its name.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:net";
import { sleep } from "../../lib/index.ts";
import { logTail, type ProcessGroup } from "../../cluster/processes.ts";
import type { Deployment } from "../../cluster/deployment.ts";
import type { PortPlan } from "../../cluster/ports.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { postgresDataDir, serverUser } from "./server.ts";
import { PGBOUNCER_SERVER } from "./programs.ts";

function config(listen: ServerNode, upstream: ServerNode, dir: string, deployment: Deployment): string {
  return [
    "[databases]",
    `postgres = host=${deployment.memberHost(upstream.name)} port=${upstream.port} dbname=postgres user=postgres`,
    "[pgbouncer]",
    `listen_addr = ${deployment.bindHost}`,
    `listen_port = ${listen.port}`,
    // No Unix socket, as for the server (a run directory's path can be too long for one).
    "unix_socket_dir =",
    "auth_type = trust",
    `auth_file = ${join(dir, "userlist.txt")}`,
    "pool_mode = transaction",
    "default_pool_size = 1",
    "max_client_conn = 2000",
    // node-postgres sends none today; a client that does must not be refused for it.
    "ignore_startup_parameters = extra_float_digits,options",
    "",
  ].join("\n");
}

/** Start pgbouncer in front of `upstream` on a port of its own; the node clients reach. */
export async function startPgbouncer(group: ProcessGroup, ports: PortPlan, runDir: string, upstream: ServerNode, deployment: Deployment): Promise<ServerNode> {
  const node: ServerNode = { name: "pgbouncer-1", host: "127.0.0.1", port: await ports.take() };
  // It refuses to run as root, like Postgres, and reads its files as the postgres user.
  const dir = postgresDataDir(group, runDir, node.name, deployment);
  const ini = join(dir, "pgbouncer.ini");
  writeFileSync(ini, config(node, upstream, dir, deployment));
  writeFileSync(join(dir, "userlist.txt"), `"postgres" ""\n`);
  const logFile = join(runDir, "logs", `${node.name}.log`);
  await deployment.start({ name: node.name, program: PGBOUNCER_SERVER, args: [ini], dataDir: dir, logFile, ports: [node.port], user: serverUser() });
  const deadline = Date.now() + (deployment.name === "local" ? 10_000 : 30_000);
  for (;;) {
    if (!deployment.running(node.name)) throw new Error(`${node.name} exited at start (port ${node.port}):\n${logTail(logFile)}`);
    if (await listening(node)) return node;
    if (Date.now() > deadline) throw new Error(`${node.name} did not listen on port ${node.port} within 10 s:\n${logTail(logFile)}`);
    await sleep(20);
  }
}

function listening(node: ServerNode): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: node.host, port: node.port });
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("error", () => resolve(false));
  });
}
