// --backend zookeeper: three ZooKeeper 3.8 servers in a quorum, whose traffic to
// each other passes the fault proxy (in containers: their network), and
// ZooKeeper's lock recipes: the lock and the shared lock, done right and done as
// often written, and kazoo's and Curator's by their reference adapter programs.
import { shippedProgram } from "../../clients/index.ts";
import type { Backend, ClientKind } from "../../core/index.ts";
import { CURATOR, KAZOO, ZOOKEEPER, ZOOKEEPER_SERVER, ZOOKEEPER_VERSION } from "./programs.ts";
import { Z1, Z2, Z3 } from "./scenarios.ts";

const CLIENTS: Record<string, ClientKind> = {
  zookeeper: {
    describe: "ZooKeeper's recipe: ephemeral sequential node with the session id in its name (protection mode), lowest holds, each waiter watches the next lower; fence = the node's czxid",
    kinds: { cancel: true },
    load: async () => {
      const { ZkLock } = await import("./client.ts");
      return (ctx) => new ZkLock(ctx);
    },
  },
  "zookeeper-naive": {
    describe: "the same recipe without protection mode (a create whose reply was lost is sent again) and without a session check after an expiry (CURATOR-206/604), kept on purpose",
    load: async () => {
      const { ZkLock } = await import("./client.ts");
      return (ctx) => new ZkLock(ctx, true);
    },
  },
  "zookeeper-cancel-naive": {
    describe: "as zookeeper, but a cancelled waiter answers \"cancelled\" at once without deleting its node or looking whether its turn came: the node stays queued under its live session and holds the lock for nobody (kept on purpose)",
    kinds: { cancel: true },
    load: async () => {
      const { ZkLock } = await import("./client.ts");
      return (ctx) => new ZkLock(ctx, false, true);
    },
  },
  "zookeeper-rw": {
    describe: "ZooKeeper's shared-lock recipe: read- and write- ephemeral sequential nodes (protection mode); a reader waits for lower write- nodes, a writer for any lower node; fence = the node's czxid",
    kinds: { rw: true, cancel: true },
    load: async () => {
      const { ZkRwLock } = await import("./rw.ts");
      return (ctx) => new ZkRwLock(ctx);
    },
  },
  // Reference adapter programs (adapters/, docs/adapter-protocol.md): Python's kazoo and Java's Apache Curator, as their users call them.
  kazoo: { ...shippedProgram("adapters/python/kazoo.adapter.json"), needs: KAZOO },
  curator: { ...shippedProgram("adapters/java/curator.adapter.json"), needs: CURATOR },
};

export const backend = {
  name: "zookeeper",
  describe: "three ZooKeeper 3.8 servers (a quorum); member-to-member traffic through the fault proxy (in docker mode: over the run's network)",
  clients: CLIENTS,
  defaultClient: "zookeeper",
  abilities: ["kill"],
  lacks: {
    clock: "ZooKeeper expires sessions by the JVM's monotonic clock (System.nanoTime), which libfaketime and a wall-clock jump do not move: a clock fault would change nothing it decides",
  },
  members: true,
  needsToxics: {
    zk_sid_only: "member-to-member partitions: leader election connects back to the address a member advertises, around the proxies, unless the first message is rewritten",
  },
  // In containers the members always meet on the run's network, and a member
  // partition cuts them off it (server.ts says why no proxy can).
  start: async (ctx) =>
    (await import("./server.ts")).startZkCluster({
      group: ctx.group,
      ports: ctx.ports,
      runDir: ctx.runDir,
      toxiproxyUrl: await ctx.toxiproxyUrl(),
      deployment: ctx.deployment,
      directPeers: ctx.deployment.name === "docker",
      peerToxics: ctx.serverOptions.memberPartitions === "proxy",
    }),
  // An ensemble of the user's: the run's nodes under its key prefix, a marker
  // that says the run is alive, and a crashed run's leftovers swept at the start.
  external: {
    check: async (test, warn) => (await import("./external.ts")).checkZkEnsemble(test, warn),
    open: async (ctx) => (await import("./external.ts")).openZkEnsemble(ctx),
  },
  programs: [ZOOKEEPER_SERVER],
  serverNames: ["zk-1", "zk-2", "zk-3"],
  removeKeys: async (nodes, prefix) => (await import("./external.ts")).removeZkKeys(nodes, prefix),
  needs: { servers: ZOOKEEPER },
  versions: { zookeeper: ZOOKEEPER_VERSION },
  packages: ["node-zookeeper-client"],
  scenarios: [Z1, Z2, Z3],
} as const satisfies Backend;
