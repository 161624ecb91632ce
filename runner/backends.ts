// Backends: a lock service the local cluster can start, and the clients that talk
// to it. Adding one touches no workload or nemesis.
import type { ProcessGroup } from "../cluster/processes.ts";
import type { PortPlan } from "../cluster/ports.ts";
import { startRedisCluster } from "../cluster/redis-cluster.ts";
import type { RedisPersistence, RedisNodeOptions } from "../cluster/redis.ts";
import type { Cluster, ClusterAbility } from "../cluster/cluster.ts";
import { startEtcdCluster } from "../cluster/etcd.ts";
import type { Deployment, PauseMode } from "../cluster/deployment.ts";

/** How servers are started, from the options; each backend applies what concerns it. */
export interface ServerOptions {
  /** Redis AOF (--redis-persistence): what a killed node remembers. */
  redisPersistence: RedisPersistence;
  /** Start servers whose wall clocks the clock nemesis can move (costs a libfaketime preload). */
  skewableClocks: boolean;
  /** Where the servers run: child processes, or containers (docker/). */
  deploy: "local" | "docker";
  /** How pause-server holds a server (the freezer: containers only). */
  pauseMode: PauseMode;
  /** etcd members cut off from each other through the fault proxy, or off their container network. */
  memberPartitions: "proxy" | "network";
}

export interface BackendContext {
  group: ProcessGroup;
  /** Where the servers run. */
  deployment: Deployment;
  ports: PortPlan;
  runDir: string;
  /** The run's Toxiproxy API, for backends whose members talk to each other. */
  toxiproxyUrl: string;
  serverOptions: ServerOptions;
}

export interface Backend {
  name: string;
  describe: string;
  clients: readonly string[];
  defaultClient: string;
  /** What its Cluster can do for a nemesis; buildTest refuses a nemesis that needs more. */
  abilities?: readonly ClusterAbility[];
  /** Why an ability is missing, for that refusal (e.g. etcd: Go reads time without libc). */
  lacks?: Partial<Record<ClusterAbility, string>>;
  /** Toxics of our fault proxy it needs beyond Toxiproxy's, and what for (a --toxiproxy must have them). */
  needsToxics?: Record<string, string>;
  start(ctx: BackendContext): Promise<Cluster>;
}

export const BACKENDS: Record<string, Backend> = {
  redis: {
    name: "redis",
    describe: "one redis-server",
    clients: ["redis", "redis-unsafe-release"],
    defaultClient: "redis",
    abilities: ["kill", "clock"],
    start: (ctx) => startRedisCluster(ctx.group, ctx.ports, 1, redisNodeOptions(ctx)),
  },
  redlock: {
    name: "redlock",
    describe: "five independent redis-servers, locked by majority (Redlock)",
    clients: ["node-redlock", "node-redlock-4", "redlock"],
    defaultClient: "node-redlock",
    abilities: ["kill", "clock"],
    start: (ctx) => startRedisCluster(ctx.group, ctx.ports, 5, redisNodeOptions(ctx)),
  },
  etcd: {
    name: "etcd",
    describe: "three etcd 3.4 members (fast elections, pre-vote); member-to-member traffic through the fault proxy",
    clients: ["etcd-queue", "etcd3-lock"],
    defaultClient: "etcd-queue",
    abilities: ["kill"],
    lacks: { clock: "libfaketime cannot move etcd's clock (Go reads time without libc)" },
    needsToxics: { block_from: "member-to-member partitions: it refuses a connection whose first request comes from a blocked member" },
    start: (ctx) =>
      startEtcdCluster({
        group: ctx.group,
        ports: ctx.ports,
        runDir: ctx.runDir,
        toxiproxyUrl: ctx.toxiproxyUrl,
        deployment: ctx.deployment,
        directPeers: ctx.serverOptions.memberPartitions === "network",
      }),
  },
};

function redisNodeOptions(ctx: BackendContext): RedisNodeOptions {
  return { runDir: ctx.runDir, persistence: ctx.serverOptions.redisPersistence, skewableClock: ctx.serverOptions.skewableClocks, deployment: ctx.deployment };
}
