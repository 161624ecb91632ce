// One real dynalite for a test file, started as a run starts --backend dynamodb's
// (the lock table made), stopped after its tests once `closing` (its clients) is done.
import { beforeAll, afterAll } from "vitest";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import { localDeployment } from "../../../cluster/deployment.ts";
import type { DynaliteCluster } from "../server.ts";
import type { ServerNode } from "../../../cluster/cluster.ts";
import { startDynamoBackend } from "../start.ts";
import type { BackendContext, ServerOptions } from "../../../core/index.ts";
import { LockTable, type LockItem } from "../connection.ts";
import { tempRunDir } from "../../../test/helpers.ts";

export interface DynamoServer {
  node(): ServerNode;
  cluster(): DynaliteCluster;
  group(): ProcessGroup;
  runDir(): string;
  /** The lock item of `key` as the server has it (read directly, not through any proxy). */
  item(key: string): Promise<LockItem | null>;
}

export function useDynamoServer(closing: () => Promise<unknown> = async () => {}, persistence: "disk" | "memory" = "disk"): DynamoServer {
  let group: ProcessGroup;
  let cluster: DynaliteCluster;
  let dir: string;
  let direct: LockTable;
  beforeAll(async () => {
    dir = tempRunDir("fc-dynamo-");
    group = new ProcessGroup(dir);
    const serverOptions: ServerOptions = { skewableClocks: false, deploy: "local", external: null, pauseMode: "signal", memberPartitions: "proxy" };
    const ctx: BackendContext = { group, deployment: localDeployment(group), ports: new PortPlan(0), runDir: dir, toxiproxyUrl: async () => "", serverOptions, options: {} };
    cluster = await startDynamoBackend(ctx, persistence === "disk");
    direct = new LockTable(cluster.node, 2000);
  }, 30_000);
  afterAll(async () => {
    await closing();
    direct?.close();
    await group?.stopAll();
  });
  const item = async (key: string): Promise<LockItem | null> => {
    const r = await direct.read(key);
    if (!r.ok) throw new Error(`reading ${key}: ${r.error}`);
    return r.out;
  };
  return { node: () => cluster.node, cluster: () => cluster, group: () => group, runDir: () => dir, item };
}
