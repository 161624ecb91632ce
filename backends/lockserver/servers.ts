// The lock servers of a run (--backend lockserver: one; the majority manager of
// issue 31: five), each a process of its own on a port of the run's, started,
// frozen, killed and restarted through the deployment like a redis-server. A
// killed server comes back on the same port and the same data directory: with
// --lockserver-persistence always it replays its journal there, with none it
// starts empty (no holders, every fence counter at 0).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { entryArgs } from "../../lib/paths.ts";
import { memberControls, type Cluster } from "../../cluster/cluster.ts";
import { localDeployment, type Deployment } from "../../cluster/deployment.ts";
import { waitForMembers, type ProcessGroup } from "../../cluster/processes.ts";
import type { PortPlan } from "../../cluster/ports.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { askOnce } from "./protocol.ts";
import { LOCK_SERVER } from "./programs.ts";

export type LockServerPersistence = "none" | "always";

export interface LockServerOptions {
  runDir: string;
  /** lockserver-1 … lockserver-<count>. */
  count: number;
  persistence: LockServerPersistence;
  deployment?: Deployment;
  startTimeoutMs?: number;
}

export interface LockServerCluster extends Cluster {
  kill(name: string): Promise<void>;
  restart(name: string): Promise<void>;
}

export const lockServerNames = (n: number): string[] => Array.from({ length: n }, (_, i) => `lockserver-${i + 1}`);

const READY_TIMEOUT_MS = 1000;

/** Whether it answers a ping (a listening socket is not yet a server that answers). */
export async function answers(node: ServerNode): Promise<boolean> {
  return (await askOnce(node.host, node.port, { id: 0, op: "ping" }, READY_TIMEOUT_MS))?.ok === true;
}

export async function startLockServers(group: ProcessGroup, ports: PortPlan, opts: LockServerOptions): Promise<LockServerCluster> {
  const deployment = opts.deployment ?? localDeployment(group);
  const nodes: ServerNode[] = [];
  for (const name of lockServerNames(opts.count)) nodes.push({ name, host: deployment.bindHost, port: await ports.take() });
  mkdirSync(join(opts.runDir, "logs"), { recursive: true });
  const dataDir = (n: ServerNode): string => join(opts.runDir, "data", n.name);
  const logFile = (name: string): string => join(opts.runDir, "logs", `${name}.log`);
  const member = (name: string): ServerNode => {
    const n = nodes.find((m) => m.name === name);
    if (!n) throw new Error(`no lock server named ${name} (there are ${nodes.map((m) => m.name).join(", ")})`);
    return n;
  };
  const spawn = async (n: ServerNode): Promise<void> => {
    mkdirSync(dataDir(n), { recursive: true });
    const args = [...entryArgs("backends/lockserver/main"), "--port", String(n.port), "--data", dataDir(n), "--persistence", opts.persistence];
    await deployment.start({ name: n.name, program: LOCK_SERVER, args, dataDir: dataDir(n), logFile: logFile(n.name), ports: [n.port] });
  };
  const timeoutMs = opts.startTimeoutMs ?? 15_000;
  const answering = (name: string): Promise<void> =>
    waitForMembers([name], "answering", () => answers(member(name)), { running: (m) => deployment.running(m), logFile, timeoutMs, stepMs: 25 });
  await Promise.all(nodes.map(spawn));
  await Promise.all(nodes.map((n) => answering(n.name)));
  return { nodes, ...memberControls(deployment, member, spawn, answering) };
}
