// dynalite, an implementation of DynamoDB's API on LevelDB (npm dynalite, an
// optional dependency), as a server of the run: a Node process of its own on a
// port of the run's, so that the nemeses can freeze, kill and restart it like
// any other server. The lock service of --backend dynamodb, and whatever else
// keeps its state in a DynamoDB of its own (the resource's resource-db).
//
// Its LevelDB directory is data/<name> of the run directory when it is to
// survive a kill; without one dynalite keeps everything in memory, and a killed
// server comes back empty: no tables at all. `prepare` runs after every start,
// so whoever needs tables makes them there, again after such a restart.
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { memberControls, type Cluster } from "../../cluster/cluster.ts";
import { localDeployment, type Deployment } from "../../cluster/deployment.ts";
import { waitForMembers, type ProcessGroup } from "../../cluster/processes.ts";
import type { PortPlan } from "../../cluster/ports.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { dynamoClient } from "./connection.ts";
import { DYNALITE_SERVER } from "./programs.ts";

/** cli.js of the dynalite our package installed; an optional dependency, so it may be missing. */
export function dynaliteCli(): string {
  try {
    return createRequire(import.meta.url).resolve("dynalite/cli.js");
  } catch {
    throw new Error(
      "dynalite is not installed: --backend dynamodb runs it as its DynamoDB. It is an optional dependency of fencecheck; " +
        "install it with `npm install` (without --omit=optional / --no-optional) in fencecheck's directory",
    );
  }
}

export interface DynaliteOptions {
  runDir: string;
  /** Its name in the run: dynamodb-1 for the lock service, resource-db for the resource's. */
  name: string;
  /** Keep its tables in data/<name> (LevelDB), so that they survive a kill; else in memory, which a kill loses. */
  persistent: boolean;
  /** Run once it answers, at start and after every restart: make its tables there. */
  prepare?: (node: ServerNode) => Promise<void>;
  /** Where it runs (default: a child process of the group). */
  deployment?: Deployment;
  startTimeoutMs?: number;
}

/** One dynalite: its node, and the abilities the kill and pause nemeses use. */
export interface DynaliteCluster extends Cluster {
  node: ServerNode;
  kill(name: string): Promise<void>;
  restart(name: string): Promise<void>;
}

const READY_TIMEOUT_MS = 1000;

/** Whether it answers a real request (a listening socket is not yet a server that answers). */
async function answers(node: ServerNode): Promise<boolean> {
  const client = dynamoClient(node, READY_TIMEOUT_MS);
  try {
    await client.send(new ListTablesCommand({ Limit: 1 }));
    return true;
  } catch {
    return false;
  } finally {
    client.destroy();
  }
}

export async function startDynalite(group: ProcessGroup, ports: PortPlan, opts: DynaliteOptions): Promise<DynaliteCluster> {
  const deployment = opts.deployment ?? localDeployment(group);
  const cli = dynaliteCli();
  // dynalite ignores --port 0 (it takes 4567): the port must be chosen here.
  const node: ServerNode = { name: opts.name, host: deployment.bindHost, port: await ports.take() };
  const dataDir = join(opts.runDir, "data", node.name);
  const logFile = join(opts.runDir, "logs", `${node.name}.log`);
  mkdirSync(join(opts.runDir, "logs"), { recursive: true });
  if (opts.persistent) mkdirSync(dataDir, { recursive: true });
  const args = [
    cli,
    "--host",
    node.host,
    "--port",
    String(node.port),
    // A table is ACTIVE at once (by default it stays CREATING for half a second).
    "--createTableMs",
    "0",
    "--deleteTableMs",
    "0",
    "--updateTableMs",
    "0",
    ...(opts.persistent ? ["--path", dataDir] : []),
  ];
  const member = (name: string): ServerNode => {
    if (name !== node.name) throw new Error(`no dynalite named ${name} (there is ${node.name})`);
    return node;
  };
  // Again after a kill: the same port, the same LevelDB directory (the old process's lock on it died with it).
  const spawn = async (): Promise<void> => deployment.start({ name: node.name, program: DYNALITE_SERVER, args, dataDir, logFile, ports: [node.port] });
  const timeoutMs = opts.startTimeoutMs ?? 15_000;
  const answering = async (): Promise<void> => {
    await waitForMembers([node.name], "answering", () => answers(node), { running: (n) => deployment.running(n), logFile: () => logFile, timeoutMs, stepMs: 50 });
    await opts.prepare?.(node);
  };
  await spawn();
  await answering();
  return { node, nodes: [node], ...memberControls(deployment, member, spawn, answering) };
}

