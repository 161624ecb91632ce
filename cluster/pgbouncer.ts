// pgbouncer (Debian's 1.18) in front of the run's Postgres, in transaction
// pooling: each transaction of a client runs on whichever server connection is
// free, so session state (a session advisory lock, a SET) stays behind on a
// server connection that other clients' transactions then use. That is the
// pitfall the P1 scenario shows; the pool is one server connection so that
// every client's transactions share it, and the outcome does not depend on timing.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:net";
import { sleep } from "../lib/index.ts";
import { logTail, type ProcessGroup } from "./processes.ts";
import type { PortPlan } from "./ports.ts";
import type { ServerNode } from "./redis.ts";
import { serverDataDir, serverUser } from "./postgres.ts";
import { pgbouncerBinary } from "./programs.ts";

export { pgbouncerBinary };

function config(listen: ServerNode, upstream: ServerNode, dir: string): string {
  return [
    "[databases]",
    `postgres = host=${upstream.host} port=${upstream.port} dbname=postgres user=postgres`,
    "[pgbouncer]",
    `listen_addr = ${listen.host}`,
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
export async function startPgbouncer(group: ProcessGroup, ports: PortPlan, runDir: string, upstream: ServerNode): Promise<ServerNode> {
  const node: ServerNode = { name: "pgbouncer-1", host: "127.0.0.1", port: await ports.take() };
  // It refuses to run as root, like Postgres, and reads its files as the postgres user.
  const dir = serverDataDir(group, runDir, node.name);
  const user = serverUser();
  const ini = join(dir, "pgbouncer.ini");
  writeFileSync(ini, config(node, upstream, dir));
  writeFileSync(join(dir, "userlist.txt"), `"postgres" ""\n`);
  const logFile = join(runDir, "logs", `${node.name}.log`);
  await group.spawn({ name: node.name, command: pgbouncerBinary(), args: [ini], logFile, user });
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (!group.running(node.name)) throw new Error(`${node.name} exited at start (port ${node.port}):\n${logTail(logFile)}`);
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
