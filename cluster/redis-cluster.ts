// Redis nodes as a Cluster with the abilities the kill and clock nemeses need:
// SIGKILL a node, start it again where it was (what it remembers depends on
// --redis-persistence), and move its wall clock when it runs under libfaketime.
import type { Cluster } from "./cluster.ts";
import type { ProcessGroup } from "./processes.ts";
import type { PortPlan } from "./ports.ts";
import { faketimePreload, writeOffset } from "./faketime.ts";
import { startRedisNode, startRedisNodes, clockOffsetFile, type RedisNodeOptions } from "./redis.ts";

export async function startRedisCluster(group: ProcessGroup, ports: PortPlan, count: number, opts: RedisNodeOptions): Promise<Cluster> {
  // Before any node starts: a missing library is one clear message, not one per node.
  if (opts.skewableClock) faketimePreload();
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
      await group.kill(name);
    },
    restart: async (name) => {
      const n = node(name);
      if (group.get(name)?.alive) return;
      // A node that died on its own (or failed to restart) is still on the group's books.
      await group.kill(name);
      await startRedisNode(group, n, opts);
    },
  };
  if (opts.skewableClock)
    cluster.skewClock = async (name, offsetMs) => {
      node(name);
      writeOffset(clockOffsetFile(opts.runDir, name), offsetMs);
    };
  return cluster;
}
