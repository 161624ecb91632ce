// Redis nodes as a Cluster with the abilities the kill and clock nemeses need:
// SIGKILL a node, start it again where it was (what it remembers depends on
// --redis-persistence), and move its wall clock when it runs under libfaketime.
import type { Cluster } from "../../cluster/cluster.ts";
import type { ProcessGroup } from "../../cluster/processes.ts";
import type { PortPlan } from "../../cluster/ports.ts";
import { faketimePreload, writeOffset } from "../../cluster/faketime.ts";
import { startRedisNode, startRedisNodes, clockOffsetFile, type RedisNodeOptions } from "./server.ts";
import { localDeployment } from "../../cluster/deployment.ts";

export async function startRedisCluster(group: ProcessGroup, ports: PortPlan, count: number, options: RedisNodeOptions): Promise<Cluster> {
  const deployment = options.deployment ?? localDeployment(group);
  const opts = { ...options, deployment };
  // Before any node starts: a missing library is one clear message, not one per node
  // (a container brings its own).
  if (opts.skewableClock && deployment.name === "local") faketimePreload();
  const nodes = await startRedisNodes(group, ports, count, opts);
  const node = (name: string) => {
    const n = nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no Redis node named ${name} (nodes: ${nodes.map((x) => x.name).join(", ")})`);
    return n;
  };
  const cluster: Cluster = {
    nodes,
    kill: async (name) => {
      node(name);
      await deployment.kill(name);
    },
    restart: async (name) => {
      const n = node(name);
      if (deployment.running(name)) return;
      // A node that died on its own (or failed to restart) is still on the deployment's books.
      await deployment.kill(name);
      await startRedisNode(group, n, opts);
    },
    pause: (name) => deployment.pause(node(name).name),
    resume: (name) => deployment.resume(node(name).name),
    running: (name) => deployment.running(name),
  };
  if (opts.skewableClock)
    cluster.skewClock = async (name, offsetMs) => {
      node(name);
      writeOffset(clockOffsetFile(opts.runDir, name), offsetMs);
    };
  return cluster;
}
