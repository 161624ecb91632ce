// Backends: a lock service the local cluster can start, and the clients that talk
// to it. Adding one touches no workload or nemesis.
import type { ProcessGroup } from "../cluster/processes.ts";
import type { PortPlan } from "../cluster/ports.ts";
import { startRedisCluster } from "../backends/redis/servers.ts";
import type { RedisPersistence, RedisNodeOptions } from "../backends/redis/server.ts";
import type { Cluster, ClusterAbility, MemberClusterOptions } from "../cluster/cluster.ts";
import type { Deployment, PauseMode } from "../cluster/deployment.ts";
import type { ExternalServer, PlacedServer } from "../cluster/external.ts";
import type { ServiceAccess } from "../clients/index.ts";
import type { Test } from "../core/test-definition.ts";
import type { ServerNode } from "../backends/redis/server.ts";
import { etcdKeyRanges } from "../clients/places.ts";

/** How servers are started, from the options; each backend applies what concerns it. */
export interface ServerOptions {
  /** Redis AOF (--redis-persistence): what a killed node remembers. */
  redisPersistence: RedisPersistence;
  /** Start servers whose wall clocks the clock nemesis can move (costs a libfaketime preload). */
  skewableClocks: boolean;
  /** Where the servers run: child processes, containers (docker/), or someone else's (cluster/external.ts). */
  deploy: "local" | "docker" | "external";
  /** --deploy external: the servers given, with their control commands. */
  external: ExternalServer[] | null;
  /** How pause-server holds a server (the freezer: containers only). */
  pauseMode: PauseMode;
  /** etcd members cut off from each other through the fault proxy, or off their container network. */
  memberPartitions: "proxy" | "network";
  /** Postgres with fsync on (--pg-durable); absent: off. */
  pgDurable?: boolean;
  /** Clients reach Postgres through pgbouncer in transaction pooling (--pg-pooler); absent: directly. */
  pgPooler?: "pgbouncer";
  /** What a killed dynalite remembers (--dynamo-persistence): its LevelDB directory (disk, the default), or nothing (memory). */
  dynamoPersistence?: "disk" | "memory";
  /** What a killed lock server remembers (--lockserver-persistence): its journal (always, the default), or nothing (none). */
  lockServerPersistence?: "none" | "always";
}

export interface BackendContext {
  group: ProcessGroup;
  /** Where the servers run. */
  deployment: Deployment;
  ports: PortPlan;
  runDir: string;
  /**
   * The run's Toxiproxy API once it is up, for backends whose members talk to each
   * other (through it). The others start their servers without waiting for it:
   * the fault proxy, a Node process, takes a few hundred ms to come up.
   */
  toxiproxyUrl(): Promise<string>;
  serverOptions: ServerOptions;
  /** The --client the run uses, for a backend whose server count depends on it (lockserver: one, or five for the majority manager); absent: its default client. */
  client?: string;
}

/** What an external service's start is given (runner/system.ts). */
export interface ExternalServiceContext {
  test: Test;
  group: ProcessGroup;
  /** The run's key prefix: whatever the run makes for itself is named under it. */
  keyPrefix: string;
  /** Records a fact in run.json (never a secret). */
  started: (what: string, info: unknown) => void;
}

/** A service of the user's, opened for a run. */
export interface OpenService {
  servers: PlacedServer[];
  /** What the clients need beyond addresses, if anything (DynamoDB: the account and table); it reaches the workers over IPC only. */
  service?: ServiceAccess;
  /** Removes what the run made there; the number of keys that went with it (called again, the same total, or with what came since). The process group's teardown removes it too. */
  remove(): Promise<number>;
}

/**
 * What a run made for itself on a service of the user's (a table, a schema),
 * removed once: by the run's close, which records how many keys went with it,
 * or by the process group's teardown, whichever comes first, so also when a
 * later step of the start fails or the run is interrupted. `removed` goes into
 * run.json once it is gone; a removal that fails says on stderr, in
 * `failed(why)`, what is left and how to remove it by hand.
 */
export function removedOnce(ctx: ExternalServiceContext, removed: [what: string, info: unknown], remove: () => Promise<number>, failed: (why: string) => string): () => Promise<number> {
  let removal: Promise<number> | null = null;
  const once = (): Promise<number> =>
    (removal ??= remove().then((n) => {
      ctx.started(...removed);
      return n;
    }));
  ctx.group.onStop(() =>
    once().then(
      () => {},
      (err: unknown) => void process.stderr.write(`fencecheck: ${failed(String((err as Error)?.message ?? err))}\n`),
    ),
  );
  return once;
}

/**
 * --deploy external for a service that needs more of the user than its
 * servers' addresses (DynamoDB: an AWS account, and a table of the run's own;
 * ZooKeeper: a session of the runner's that marks the run alive).
 */
export interface ExternalService {
  /** Where its servers are found when --endpoints is not given; absent: --endpoints is needed. */
  serversFrom?: string;
  /** Before anything starts: what the run needs of the service, asked of it; BadInput naming what is missing. */
  check(test: Test, warn: (line: string) => void): Promise<void>;
  /** At the start, once the key prefix is known: its servers placed, and what the run makes there for itself, removed at teardown whatever happens. */
  open(ctx: ExternalServiceContext): Promise<OpenService>;
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
  /**
   * The deployments (--deploy) its servers cannot run in, each with why, which
   * the refusal prints; every other deployment it runs in (local always).
   * test/runner/deployments.test.ts holds every backend to this: a refusal with
   * its reason, or a test that runs it there.
   */
  cannot?: Partial<Record<"docker" | "external", string>>;
  /** Toxics of our fault proxy it needs beyond Toxiproxy's, and what for (a --toxiproxy must have them). */
  needsToxics?: Record<string, string>;
  start(ctx: BackendContext): Promise<Cluster>;
  /** Its servers' names, which an external cluster's endpoints take (--deploy external). */
  serverNames: readonly string[];
  /** --deploy external, where it takes more than addresses and removeKeys: the service's own check, start and removal. */
  external?: ExternalService;
  /** Delete the run's keys (its lock keys all start with `prefix`) from a cluster it shares; the number deleted. */
  removeKeys(nodes: readonly ServerNode[], prefix: string): Promise<number>;
}

const redisNames = (n: number): string[] => Array.from({ length: n }, (_, i) => `redis-${i + 1}`);

/** ioredis is loaded by the runs that remove keys (--deploy external) only: every other run's start is spared it (about 80 ms). */
async function removeRedisKeys(nodes: readonly ServerNode[], prefix: string): Promise<number> {
  const { removeKeysUnder } = await import("../backends/redis/client.ts");
  const counts = await Promise.all(nodes.map((n) => removeKeysUnder(n, prefix, 5000)));
  return counts.reduce((a, b) => a + b, 0);
}

/** On the first member that answers: a delete is replicated to the others. */
async function removeEtcdKeys(nodes: readonly ServerNode[], prefix: string): Promise<number> {
  const { EtcdAdmin } = await import("../backends/etcd/admin.ts");
  let last: unknown = null;
  for (const n of nodes) {
    const admin = new EtcdAdmin(n.name, n.port, 5000, n.host);
    try {
      let deleted = 0;
      for (const range of etcdKeyRanges(prefix)) deleted += await admin.deleteUnder(range);
      return deleted;
    } catch (err) {
      last = err;
    } finally {
      admin.close();
    }
  }
  throw new Error(`no etcd member deleted the keys under ${prefix}: ${(last as Error)?.message}`);
}

export const BACKENDS: Record<string, Backend> = {
  redis: {
    name: "redis",
    describe: "one redis-server",
    clients: [
      "redis",
      "redis-unsafe-release",
      "redis-blind-renew",
      "redis-semaphore",
      "simple-redis-mutex",
      "redis-py",
      "redis-py-timeout-0",
      "redis-reentrant",
      "redis-fenced-reentrant",
      "redis-reentrant-unsafe-release",
      "redis-reentrant-no-refresh",
      "redis-semaphore-counting",
      "redis-multi-semaphore",
      "redis-semaphore-racy",
    ],
    defaultClient: "redis",
    abilities: ["kill", "clock"],
    start: (ctx) => startRedisCluster(ctx.group, ctx.ports, 1, redisNodeOptions(ctx)),
    serverNames: redisNames(1),
    removeKeys: removeRedisKeys,
  },
  redlock: {
    name: "redlock",
    describe: "five independent redis-servers, locked by majority (Redlock)",
    clients: ["node-redlock", "node-redlock-4", "redlock", "sesame-redlock"],
    defaultClient: "node-redlock",
    abilities: ["kill", "clock"],
    start: (ctx) => startRedisCluster(ctx.group, ctx.ports, 5, redisNodeOptions(ctx)),
    serverNames: redisNames(5),
    removeKeys: removeRedisKeys,
  },
  etcd: {
    name: "etcd",
    describe: "three etcd 3.4 members (fast elections, pre-vote); member-to-member traffic through the fault proxy",
    clients: ["etcd-queue", "etcd-queue-cancel-delete", "etcd-rw", "etcd-rw-writer-naive", "etcd3-lock", "python-etcd3", "python-etcd3-with"],
    defaultClient: "etcd-queue",
    abilities: ["kill"],
    lacks: { clock: "libfaketime cannot move etcd's clock (Go reads time without libc)" },
    needsToxics: { block_from: "member-to-member partitions: it refuses a connection whose first request comes from a blocked member" },
    // etcd's, ZooKeeper's, Postgres' and DynamoDB's code (and the client libraries
    // it uses) is loaded by the runs of those backends only.
    // The module (and etcd3's gRPC stack the harness asks the members with) loads while the proxy comes up.
    start: async (ctx) => (await import("../backends/etcd/server.ts")).startEtcdCluster(await memberOptions(ctx, ctx.serverOptions.memberPartitions === "network")),
    serverNames: ["etcd-1", "etcd-2", "etcd-3"],
    removeKeys: removeEtcdKeys,
  },
  zookeeper: {
    name: "zookeeper",
    describe: "three ZooKeeper 3.8 servers (a quorum); member-to-member traffic through the fault proxy (in docker mode: over the run's network)",
    clients: ["zookeeper", "zookeeper-naive", "zookeeper-cancel-naive", "zookeeper-rw", "kazoo", "curator"],
    defaultClient: "zookeeper",
    abilities: ["kill"],
    lacks: {
      clock: "ZooKeeper expires sessions by the JVM's monotonic clock (System.nanoTime), which libfaketime and a wall-clock jump do not move: a clock fault would change nothing it decides",
    },
    needsToxics: {
      zk_sid_only: "member-to-member partitions: leader election connects back to the address a member advertises, around the proxies, unless the first message is rewritten",
    },
    // In containers the members always meet on the run's network, and a member
    // partition cuts them off it (backends/zookeeper/server.ts says why no proxy can).
    start: async (ctx) => (await import("../backends/zookeeper/server.ts")).startZkCluster(await memberOptions(ctx, ctx.deployment.name === "docker")),
    // An ensemble of the user's: the run's nodes under its key prefix, a marker
    // that says the run is alive, and a crashed run's leftovers swept at the start.
    external: {
      check: async (test, warn) => (await import("../backends/zookeeper/external.ts")).checkZkEnsemble(test, warn),
      open: async (ctx) => (await import("../backends/zookeeper/external.ts")).openZkEnsemble(ctx),
    },
    serverNames: ["zk-1", "zk-2", "zk-3"],
    removeKeys: async (nodes, prefix) => (await import("../backends/zookeeper/external.ts")).removeZkKeys(nodes, prefix),
  },
  postgres: {
    name: "postgres",
    describe:
      "one Postgres 15 server made for the run (initdb in its run directory, fsync off unless --pg-durable), or a Postgres of yours (--deploy external): the lock tables in a schema of the run's own, dropped at the end",
    clients: ["postgres-lease", "postgres-advisory"],
    defaultClient: "postgres-lease",
    abilities: ["kill"],
    lacks: { clock: "the lock clients read the time with clock_timestamp(), and libfaketime under Postgres is not set up here" },
    start: async (ctx) => (await import("../backends/postgres/start.ts")).startPostgresBackend(ctx),
    // A Postgres of the user's: whom to connect as from the PG* variables, the lock tables in a schema of the run's.
    external: {
      serversFrom: "PGHOST and PGPORT (localhost and 5432 when unset)",
      check: async (test) => (await import("../backends/postgres/external.ts")).checkPostgresService(test),
      open: async (ctx) => (await import("../backends/postgres/external.ts")).openPostgresService(ctx),
    },
    serverNames: ["postgres-1"],
    removeKeys: async (nodes, prefix) => (await import("../backends/postgres/external.ts")).removeRunSchema(nodes, prefix),
  },
  dynamodb: {
    name: "dynamodb",
    describe: "one dynalite (DynamoDB's API on LevelDB) made for the run, or a DynamoDB of yours (--deploy external); the lock table fencecheck_locks (on yours, one of the run's own), an item per lock key",
    clients: ["dynamodb-cas", "dynamodb-rvn", "dynamodb-lock-client"],
    defaultClient: "dynamodb-cas",
    abilities: ["kill"],
    lacks: {
      clock: "dynalite keeps no time for the locks (no TTL, no server-side lease): the leases are judged by the clients' clocks (dynamodb-cas) or by none (dynamodb-rvn, dynamodb-lock-client), so moving the server's clock would change nothing it decides",
    },
    cannot: {
      docker: "its servers run as local processes or a service of yours (--deploy external) only: dynalite is an npm package a run starts with Node, and there is no container image of it",
    },
    start: async (ctx) => (await import("../backends/dynamodb/start.ts")).startDynamoBackend(ctx),
    // A DynamoDB of the user's: its account from the AWS environment, the locks in a table of the run's.
    external: {
      serversFrom: "the AWS environment: AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL, or the region's own endpoint",
      check: async (test, warn) => (await import("../backends/dynamodb/external.ts")).checkDynamoService(test, warn),
      open: async (ctx) => (await import("../backends/dynamodb/external.ts")).openDynamoService(ctx),
    },
    serverNames: ["dynamodb-1"],
    removeKeys: async (nodes, prefix) => (await import("../backends/dynamodb/start.ts")).removeDynamoKeys(nodes, prefix),
  },
  lockserver: {
    name: "lockserver",
    describe:
      "lock servers of the seed's design made for the run (backends/lockserver/): TCP on loopback, per key a holder, a lease, FIFO waiters and a fence counter; its journal fsynced per change unless --lockserver-persistence none. One server, or five independent ones for lockserver-majority",
    clients: ["lockserver", "lockserver-majority"],
    defaultClient: "lockserver",
    abilities: ["kill"],
    lacks: {
      clock: "the lock server times its leases and waits by its monotonic clock (performance.now), which libfaketime's wall-clock offset does not move: a clock fault would change nothing it decides",
    },
    cannot: {
      docker: "its servers run as local processes only: the lock server is fencecheck's own, started from this package with Node, and there is no container image of it",
      external: "its servers run as local processes only: the lock server is fencecheck's own test subject, so there is no server of yours to point a run at",
    },
    start: async (ctx) =>
      (await import("../backends/lockserver/servers.ts")).startLockServers(ctx.group, ctx.ports, {
        runDir: ctx.runDir,
        count: ctx.client === "lockserver-majority" ? 5 : 1,
        persistence: ctx.serverOptions.lockServerPersistence ?? "always",
        deployment: ctx.deployment,
      }),
    // lockserver-majority's five are lockserver-1 … lockserver-5.
    serverNames: ["lockserver-1"],
    removeKeys: async () => {
      throw new Error("--backend lockserver runs its own servers only");
    },
  },
};

/** How a cluster of members is started: `directPeers`, whether they meet on their own network rather than through the fault proxy. */
async function memberOptions(ctx: BackendContext, directPeers: boolean): Promise<MemberClusterOptions> {
  return { group: ctx.group, ports: ctx.ports, runDir: ctx.runDir, toxiproxyUrl: await ctx.toxiproxyUrl(), deployment: ctx.deployment, directPeers };
}

function redisNodeOptions(ctx: BackendContext): RedisNodeOptions {
  return { runDir: ctx.runDir, persistence: ctx.serverOptions.redisPersistence, skewableClock: ctx.serverOptions.skewableClocks, deployment: ctx.deployment };
}
