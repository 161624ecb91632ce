// Real redis-server processes on loopback, one data directory and log each under
// the run directory. Persistence is off unless asked for: what survives a kill is
// a nemesis parameter (issue 4), not an accident of defaults.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:net";
import { sleep } from "../../lib/index.ts";
import { logTail, type ProcessGroup } from "../../cluster/processes.ts";
import type { PortPlan } from "../../cluster/ports.ts";
import { writeOffset } from "../../cluster/faketime.ts";
import { localDeployment, type Deployment } from "../../cluster/deployment.ts";
import type { ServerNode } from "../../cluster/cluster.ts";

import { REDIS_SERVER } from "./programs.ts";

export { redisBinary } from "./programs.ts";

export interface RedisNodeOptions {
  runDir: string;
  persistence?: RedisPersistence;
  /** Run each node under libfaketime so its wall clock can be moved (cluster/faketime.ts). */
  skewableClock?: boolean;
  /** Where the nodes run (default: child processes of the group). */
  deployment?: Deployment;
  /** Lines added to redis.conf: settings of one experiment's own (e.g. the DEBUG command the keys experiment turns active expiry off with). */
  extraConfig?: readonly string[];
}

export type RedisPersistence = "none" | "everysec" | "always";

/** The file a skewable node reads its clock offset from. */
export const clockOffsetFile = (runDir: string, name: string): string => join(runDir, "data", name, "faketime");

function config(node: ServerNode, dir: string, persistence: RedisNodeOptions["persistence"], bindHost: string, extra: readonly string[]): string {
  const aof = persistence && persistence !== "none";
  return [
    `bind ${bindHost}`,
    // Inside a container it binds every interface of the container's own network
    // (its port is published on the host's loopback only): protected mode would
    // refuse those connections for want of a password.
    `protected-mode no`,
    `port ${node.port}`,
    `dir ${dir}`,
    `daemonize no`,
    `save ""`,
    `appendonly ${aof ? "yes" : "no"}`,
    ...(aof ? [`appendfsync ${persistence}`] : []),
    `logfile ""`,
    // Its process title would be written over its environment (setproctitle),
    // and with it the run's marker that finds a dead run's leftovers (cluster/leftovers.ts).
    `set-proc-title no`,
    ...extra,
  ].join("\n") + "\n";
}

/** Start one node (again, after a kill: same port, same data directory). */
export async function startRedisNode(group: ProcessGroup, node: ServerNode, opts: RedisNodeOptions): Promise<void> {
  const deployment = opts.deployment ?? localDeployment(group);
  const dir = join(opts.runDir, "data", node.name);
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, "redis.conf");
  writeFileSync(conf, config(node, dir, opts.persistence, deployment.bindHost, opts.extraConfig ?? []));
  const logFile = join(opts.runDir, "logs", `${node.name}.log`);
  let clockFile: string | undefined;
  if (opts.skewableClock) {
    clockFile = clockOffsetFile(opts.runDir, node.name);
    // A restarted node keeps the offset it had: its machine's clock did not heal by itself.
    if (!existsSync(clockFile)) writeOffset(clockFile, 0);
  }
  await deployment.start({ name: node.name, program: REDIS_SERVER, args: [conf], dataDir: dir, logFile, ports: [node.port], clockFile });
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (!deployment.running(node.name)) throw new Error(`${node.name} exited at start (port ${node.port}):\n${logTail(logFile)}`);
    if (await pingOnce(node)) return;
    if (Date.now() > deadline) throw new Error(`${node.name} did not answer PING on port ${node.port} within 10 s:\n${logTail(logFile)}`);
    await sleep(20);
  }
}

export async function startRedisNodes(group: ProcessGroup, ports: PortPlan, count: number, opts: RedisNodeOptions): Promise<ServerNode[]> {
  const nodes: ServerNode[] = [];
  for (let i = 1; i <= count; i++) nodes.push({ name: `redis-${i}`, host: "127.0.0.1", port: await ports.take() });
  await Promise.all(nodes.map((n) => startRedisNode(group, n, opts)));
  return nodes;
}

/** One PING over a raw socket: true on +PONG. Raw, so readiness needs no client. */
function pingOnce(node: ServerNode): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: node.host, port: node.port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(500, () => done(false));
    s.once("error", () => done(false));
    s.once("connect", () => s.write("PING\r\n"));
    s.once("data", (d) => done(d.toString().startsWith("+PONG")));
  });
}
