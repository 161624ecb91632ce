// --backend redlock: five independent redis-servers locked by majority, with the
// Redlock clients people use (npm redlock 5 and 4, the maintained fork of 5,
// Python's pottery, Go's redsync and Redisson's MultiLock and RedLock by their adapter programs) and the algorithm as the Redis
// documentation writes it. Redlock issues no fence: a
// hold's fence comes from Redis counters on the nodes (--fence-source).
import { shippedProgram, type ClientContext } from "../../clients/index.ts";
import type { Backend, BackendOption, ClientKind } from "../../core/index.ts";
import { REDIS_PERSISTENCE, redisFenceCounter, redisNames, redisNodeOptions, removeRedisKeys } from "../redis/index.ts";
import { REDIS, REDIS_SERVER, REDIS_VERSION, REDISSON } from "../redis/programs.ts";
import { environmentRequirement } from "../../clients/program/index.ts";
import { repoFile } from "../../lib/paths.ts";
import type { RedlockClientOptions } from "../redis/nodes.ts";
import { K3, K4, K5, K7 } from "./scenarios.ts";

const CHECK_VALIDITY = {
  name: "redlock-check-validity",
  kind: "on-off",
  default: undefined,
  defaultText: "on",
  help: "--client redlock refuses a quorum that came back after the lease's validity (off: node-redlock 5's defect, K5)",
  clients: { names: ["redlock"], why: "node-redlock never checks validity, node-redlock-4 always does" },
} as const satisfies BackendOption;

function redlockOptions(ctx: ClientContext): RedlockClientOptions {
  return {
    endpoints: ctx.endpoints,
    ownerPrefix: ctx.ownerPrefix,
    commandTimeoutMs: ctx.commandTimeoutMs,
    rng: ctx.rng,
    fenceSource: ctx.options.fenceSource ?? "max-incr",
    checkValidity: (ctx.options.own?.[CHECK_VALIDITY.name] as boolean | undefined) ?? true,
    pauseAfterRepliesMs: pausesHere(ctx.options.pauseAfterReplies, ctx.id),
  };
}

function pausesHere(p: ClientContext["options"]["pauseAfterReplies"], id: number | undefined): number {
  if (!p) return 0;
  return p.clients === "all" || (id !== undefined && p.clients.includes(id)) ? p.ms : 0;
}

const CLIENTS: Record<string, ClientKind> = {
  "node-redlock": {
    package: "redlock",
    describe: "npm redlock 5.0.0-beta.2 over every node: decides at the first quorum, never checks validity (K5)",
    fenceFromMajority: true,
    load: async () => {
      const { NodeRedlock } = await import("./node-redlock.ts");
      return (ctx) => new NodeRedlock(redlockOptions(ctx));
    },
  },
  "node-redlock-4": {
    package: "redlock4",
    describe: "npm redlock 4.2.0 over every node: waits for all, checks validity",
    fenceFromMajority: true,
    load: async () => {
      const { NodeRedlock4 } = await import("./node-redlock-4.ts");
      return (ctx) => new NodeRedlock4(redlockOptions(ctx));
    },
  },
  redlock: {
    describe: "the Redis documentation's Redlock: parallel SET NX PX, majority, validity check, unlock all on failure",
    fenceFromMajority: true,
    pausesBetweenReplies: true,
    load: async () => {
      const { RedlockLock } = await import("./client.ts");
      return (ctx) => new RedlockLock(redlockOptions(ctx));
    },
  },
  "sesame-redlock": {
    package: "@sesamecare-oss/redlock",
    describe: "npm @sesamecare-oss/redlock 1.4.0 (node-redlock's maintained fork) over every node, its own retries on; no fence (use --fence-source)",
    // Its holds carry none: a fence only from --fence-source, never the max-incr the other Redlock clients default to.
    fences: false,
    load: async () => {
      const { SesameRedlock } = await import("./sesame-redlock.ts");
      return (ctx) => new SesameRedlock({ ...redlockOptions(ctx), fenceSource: ctx.options.fenceSource ?? "none" });
    },
  },
  // pottery 3.0.1's Redlock from PyPI by its reference adapter program (adapters/, docs/adapter-protocol.md).
  pottery: { ...shippedProgram("adapters/python/pottery.adapter.json", redisFenceCounter), needs: environmentRequirement("pottery", "--client pottery", repoFile("adapters/python/pottery.adapter.json")) },
  // go-redsync/redsync v4.18.1's Mutex (go-redis v9.23.0) by its reference adapter program, built from adapters/go/go.mod.
  redsync: { ...shippedProgram("adapters/go/redsync/redsync.adapter.json", redisFenceCounter), needs: environmentRequirement("redsync", "--client redsync", repoFile("adapters/go/redsync/redsync.adapter.json")) },
  // Redisson 4.7.0's RedissonMultiLock and its (deprecated) RedissonRedLock (Java): one client per node, each node's
  // RLock renewed by its watchdog; no fence. The environment is redisson's (one pom).
  "redisson-multilock": { ...shippedProgram("adapters/java/redisson/redisson-multilock.adapter.json", redisFenceCounter), needs: REDISSON },
  "redisson-redlock": { ...shippedProgram("adapters/java/redisson/redisson-redlock.adapter.json", redisFenceCounter), needs: REDISSON },
};

export const backend = {
  name: "redlock",
  describe: "five independent redis-servers, locked by majority (Redlock)",
  clients: CLIENTS,
  defaultClient: "node-redlock",
  abilities: ["kill", "clock"],
  start: async (ctx) => (await import("../redis/servers.ts")).startRedisCluster(ctx.group, ctx.ports, 5, redisNodeOptions(ctx)),
  programs: [REDIS_SERVER],
  serverNames: redisNames(5),
  removeKeys: removeRedisKeys,
  options: [REDIS_PERSISTENCE, CHECK_VALIDITY],
  needs: { servers: REDIS },
  versions: { "redis-server": REDIS_VERSION },
  packages: ["ioredis", "redlock", "redlock4", "@sesamecare-oss/redlock"],
  fenceCounter: redisFenceCounter,
  scenarios: [K3, K4, K5, K7],
} as const satisfies Backend;
