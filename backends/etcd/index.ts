// --backend etcd: three etcd 3.4 members whose traffic to each other passes the
// fault proxy (or, in containers, their network), and the etcd locks people use:
// a lease and a queue of keys by create revision as Go's concurrency.Mutex does,
// Go's recipes.RWMutex, the etcd3 npm package's lock, and python-etcd3 and Go's
// concurrency.Mutex itself by their reference adapter programs.
import { shippedProgram } from "../../clients/index.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import type { MemberClusterOptions } from "../../cluster/cluster.ts";
import type { Backend, BackendContext, ClientKind } from "../../core/index.ts";
import { etcdKeyRanges } from "./places.ts";
import { E2 } from "./scenarios.ts";
import { ETCD, ETCD_MUTEX_GO, ETCD_SERVER, ETCD_VERSION, PYTHON_ETCD3 } from "./programs.ts";

/** On the first member that answers: a delete is replicated to the others. */
async function removeEtcdKeys(nodes: readonly ServerNode[], prefix: string): Promise<number> {
  const { EtcdAdmin } = await import("./admin.ts");
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

/** How the members start: through the fault proxy's peer proxies, or (--partition-mode network) meeting on their own network. */
async function memberOptions(ctx: BackendContext): Promise<MemberClusterOptions> {
  const directPeers = ctx.serverOptions.memberPartitions === "network";
  const peerToxics = ctx.serverOptions.memberPartitions === "proxy";
  return { group: ctx.group, ports: ctx.ports, runDir: ctx.runDir, toxiproxyUrl: await ctx.toxiproxyUrl(), deployment: ctx.deployment, directPeers, peerToxics };
}

const CLIENTS: Record<string, ClientKind> = {
  "etcd-queue": {
    describe: "etcd lease + FIFO queue of keys by create revision (Go's concurrency.Mutex); fence = its key's create revision; a cancelled waiter revokes its lease",
    kinds: { cancel: true },
    sharesConnection: true,
    load: async () => {
      const { EtcdQueueLock } = await import("./queue.ts");
      return (ctx) => new EtcdQueueLock(ctx);
    },
  },
  "etcd-queue-cancel-delete": {
    describe: "as etcd-queue, but a cancelled waiter deletes only its key; if the delete is lost, the key holds up the queue until its lease expires (kept on purpose)",
    kinds: { cancel: true },
    sharesConnection: true,
    load: async () => {
      const { EtcdQueueLock } = await import("./queue.ts");
      return (ctx) => new EtcdQueueLock(ctx, "delete");
    },
  },
  "etcd-rw": {
    describe: "etcd read-write lock in the layout of Go's recipes.RWMutex: read/ and write/ keys in one queue by create revision; fence = its key's create revision",
    kinds: { rw: true, cancel: true },
    sharesConnection: true,
    load: async () => {
      const { EtcdRwLock } = await import("./rw.ts");
      return (ctx) => new EtcdRwLock(ctx);
    },
  },
  "etcd-rw-writer-naive": {
    describe: "as etcd-rw, but a writer waits for older writers only, as a reader does (one prefix wrong), so it is granted while readers hold; kept on purpose",
    kinds: { rw: true, cancel: true },
    sharesConnection: true,
    load: async () => {
      const { EtcdRwLock } = await import("./rw.ts");
      return (ctx) => new EtcdRwLock(ctx, true);
    },
  },
  "etcd3-lock": {
    package: "etcd3",
    describe: "the etcd3 package's lock (lease + put-if-absent, retried); fence = create_revision read after acquiring",
    sharesConnection: true,
    load: async () => {
      const { Etcd3Lock } = await import("./etcd3-lock.ts");
      return (ctx) => new Etcd3Lock(ctx);
    },
  },
  // Reference adapter programs (adapters/, docs/adapter-protocol.md): python-etcd3's Lock, as its users call it.
  "python-etcd3": { ...shippedProgram("adapters/python/python-etcd3.adapter.json"), needs: PYTHON_ETCD3 },
  // python-etcd3 #599, kept on purpose: the with-block enters after a failed acquire.
  "python-etcd3-with": { ...shippedProgram("adapters/python/python-etcd3-with.adapter.json"), needs: PYTHON_ETCD3 },
  // etcd's own Go lock, client/v3 concurrency.Mutex on a Session, by its reference adapter program, built from adapters/go/go.mod.
  "etcd-mutex-go": { ...shippedProgram("adapters/go/etcdmutex/etcd-mutex-go.adapter.json"), needs: ETCD_MUTEX_GO },
};

export const backend = {
  name: "etcd",
  describe: "three etcd 3.4 members (fast elections, pre-vote); member-to-member traffic through the fault proxy",
  clients: CLIENTS,
  defaultClient: "etcd-queue",
  abilities: ["kill"],
  lacks: { clock: "libfaketime cannot move etcd's clock (Go reads time without libc)" },
  members: true,
  needsToxics: { block_from: "member-to-member partitions: it refuses a connection whose first request comes from a blocked member" },
  // etcd's code (and the gRPC stack the harness asks the members with) loads while the proxy comes up.
  start: async (ctx) => (await import("./server.ts")).startEtcdCluster(await memberOptions(ctx)),
  programs: [ETCD_SERVER],
  serverNames: ["etcd-1", "etcd-2", "etcd-3"],
  removeKeys: removeEtcdKeys,
  needs: { servers: ETCD },
  versions: { etcd: ETCD_VERSION },
  packages: ["etcd3"],
  scenarios: [E2],
} as const satisfies Backend;
