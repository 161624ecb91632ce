// Backends: a lock service the local cluster can start, and the clients that talk
// to it. Adding one touches no workload or nemesis.
import type { ProcessGroup } from "../cluster/processes.ts";
import type { PortPlan } from "../cluster/ports.ts";
import { startRedisNodes } from "../cluster/redis.ts";
import type { Cluster } from "../cluster/cluster.ts";

export interface BackendContext {
  group: ProcessGroup;
  ports: PortPlan;
  runDir: string;
  /** The run's Toxiproxy API, for backends whose members talk to each other. */
  toxiproxyUrl: string;
}

export interface Backend {
  name: string;
  describe: string;
  clients: readonly string[];
  defaultClient: string;
  start(ctx: BackendContext): Promise<Cluster>;
}

export const BACKENDS: Record<string, Backend> = {
  redis: {
    name: "redis",
    describe: "one redis-server",
    clients: ["redis", "redis-unsafe-release"],
    defaultClient: "redis",
    start: async (ctx) => ({ nodes: await startRedisNodes(ctx.group, ctx.ports, 1, { runDir: ctx.runDir }) }),
  },
};
