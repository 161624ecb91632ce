// Three real ZooKeeper servers for a test file of lock clients, with the fault
// proxy for links of a test's own, an admin session that reads what the servers
// hold, and the ZooKeeper lock clients; stopped after its tests, its clients closed first.
import { beforeAll, afterAll, expect } from "vitest";
import zookeeper from "node-zookeeper-client";
import { ProcessGroup } from "../cluster/processes.ts";
import { PortPlan } from "../cluster/ports.ts";
import { startZkCluster, type ZkCluster } from "../cluster/zookeeper.ts";
import { startProxyServer, type ProxyServer } from "../proxy/index.ts";
import { CLIENTS, ZK_LOCK_ROOT, type Endpoint, type LockClient, type MakeClient } from "../clients/index.ts";
import { rng } from "../lib/index.ts";
import { tempRunDir, processesMentioning } from "./helpers.ts";

export interface ZkServers {
  cluster(): ZkCluster;
  endpoints(): Endpoint[];
  proxy(): ProxyServer;
  admin(): zookeeper.Client;
  /** The lock nodes of a key, as the servers have them, in queue order. */
  nodesOf(key: string): Promise<string[]>;
  /** A lock client of `kind` (zookeeper, zookeeper-naive, zookeeper-rw), by default over every server. */
  lock(kind: string, ownerPrefix: string, endpoints?: Endpoint[], commandTimeoutMs?: number): LockClient;
}

const KINDS = ["zookeeper", "zookeeper-naive", "zookeeper-rw"];

export function useZkCluster(prefix: string): ZkServers {
  const made: Record<string, MakeClient> = {};
  const locks: LockClient[] = [];
  let dir: string;
  let group: ProcessGroup;
  let proxy: ProxyServer;
  let cluster: ZkCluster;
  let endpoints: Endpoint[];
  let admin: zookeeper.Client;
  beforeAll(async () => {
    for (const kind of KINDS) made[kind] = await CLIENTS[kind].load();
    dir = tempRunDir(prefix);
    group = new ProcessGroup(dir);
    proxy = await startProxyServer({ port: 0 });
    cluster = await startZkCluster({ group, ports: new PortPlan(0), runDir: dir, toxiproxyUrl: proxy.url });
    endpoints = cluster.nodes.map(({ name, host, port }) => ({ name, host, port }));
    admin = zookeeper.createClient(endpoints.map((e) => `${e.host}:${e.port}`).join(","), { sessionTimeout: 10_000 });
    await new Promise<void>((resolve) => {
      admin.once("connected", () => resolve());
      admin.connect();
    });
  }, 60_000);
  afterAll(async () => {
    for (const l of locks) await l.close();
    admin?.close();
    await group?.stopAll();
    await proxy?.close();
    expect(processesMentioning(dir)).toEqual([]);
  });
  const nodesOf = (key: string): Promise<string[]> =>
    new Promise((resolve, reject) => admin.getChildren(`${ZK_LOCK_ROOT}/${key}`, (err, children) => (err ? reject(err) : resolve(children.sort((a, b) => Number(a.slice(-10)) - Number(b.slice(-10)))))));
  const lock = (kind: string, ownerPrefix: string, eps: Endpoint[] = endpoints, commandTimeoutMs = 2000): LockClient => {
    const c = made[kind]({ endpoints: eps, ownerPrefix, commandTimeoutMs, rng: rng(3, ownerPrefix), options: {} });
    locks.push(c);
    return c;
  };
  return { cluster: () => cluster, endpoints: () => endpoints, proxy: () => proxy, admin: () => admin, nodesOf, lock };
}
