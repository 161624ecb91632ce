// Backends: a lock service the local cluster can start, and the clients that talk
// to it. Adding one touches no workload or nemesis.
import type { ProcessGroup } from "../cluster/processes.ts";
import type { PortPlan } from "../cluster/ports.ts";
import { startRedisNodes, type ServerNode } from "../cluster/redis.ts";

export interface BackendContext {
  group: ProcessGroup;
  ports: PortPlan;
  runDir: string;
}

export interface Backend {
  name: string;
  describe: string;
  clients: readonly string[];
  defaultClient: string;
  start(ctx: BackendContext): Promise<ServerNode[]>;
}

export const BACKENDS: Record<string, Backend> = {
  redis: {
    name: "redis",
    describe: "one redis-server",
    clients: ["redis", "redis-unsafe-release"],
    defaultClient: "redis",
    start: (ctx) => startRedisNodes(ctx.group, ctx.ports, 1, { runDir: ctx.runDir }),
  },
};
