// Three real ZooKeeper servers for a test file, with the fault proxy their peer
// links need, and an admin session of the test's own to read what the servers
// hold (lock nodes), started once in a file's beforeAll and stopped in its afterAll.
import zookeeper from "node-zookeeper-client";
import { Toxiproxy, type Proxy } from "toxiproxy-node-client";
import { ZK_LOCK_ROOT } from "../places.ts";
import { catchUp } from "../session.ts";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import { startZkCluster, type ZkCluster } from "../server.ts";
import { startProxyServer, type ProxyServer } from "../../../proxy/index.ts";
import type { Endpoint } from "../../../clients/index.ts";
import { tempRunDir, processesMentioning } from "../../../test/helpers.ts";

export interface ZkServers {
  dir: string;
  proxy: ProxyServer;
  cluster: ZkCluster;
  endpoints: Endpoint[];
  admin: zookeeper.Client;
  /**
   * The lock nodes of a key as the servers have them, in queue order: read after
   * catchUp (../session.ts), since the admin's member may not yet have applied a
   * client's write made through another (a fresh-clone run of 2026-11-30 listed a
   * node a client had deleted a moment before).
   */
  nodesOf(key: string): Promise<string[]>;
  /** A proxy of its own in front of zk-1, for one client's faults; its replies `latencyMs` late if given. */
  linkToZk1(name: string, latencyMs?: number): Promise<{ endpoint: Endpoint; proxy: Proxy }>;
  /** Stops everything; the processes still mentioning the run's directory (none, when all went). */
  stop(): Promise<string[]>;
}

export async function startZkServers(prefix: string): Promise<ZkServers> {
  const dir = tempRunDir(prefix);
  const group = new ProcessGroup(dir);
  const proxy = await startProxyServer({ port: 0 });
  const cluster = await startZkCluster({ group, ports: new PortPlan(0), runDir: dir, toxiproxyUrl: proxy.url });
  const endpoints = cluster.nodes.map(({ name, host, port }) => ({ name, host, port }));
  const admin = zookeeper.createClient(endpoints.map((e) => `${e.host}:${e.port}`).join(","), { sessionTimeout: 10_000 });
  await new Promise<void>((resolve) => {
    admin.once("connected", () => resolve());
    admin.connect();
  });
  const path = (key: string) => `${ZK_LOCK_ROOT}/${key}`;
  return {
    dir,
    proxy,
    cluster,
    endpoints,
    admin,
    async nodesOf(key) {
      await new Promise<void>((resolve, reject) => catchUp(admin, path(key), (err) => (err ? reject(err) : resolve())));
      return new Promise((resolve, reject) => admin.getChildren(path(key), (err, children) => (err ? reject(err) : resolve(children.sort((a, b) => Number(a.slice(-10)) - Number(b.slice(-10)))))));
    },
    async linkToZk1(name, latencyMs) {
      const p = await new Toxiproxy(proxy.url).createProxy({ name, listen: "127.0.0.1:0", upstream: `127.0.0.1:${cluster.nodes[0].port}` });
      if (latencyMs !== undefined) await p.addToxic({ name: "slow-replies", type: "latency", stream: "downstream", toxicity: 1, attributes: { latency: latencyMs, jitter: 0 } } as never);
      return { endpoint: { name: "zk-1", host: "127.0.0.1", port: Number(p.listen.split(":").pop()) }, proxy: p };
    },
    async stop() {
      admin.close();
      await group.stopAll();
      await proxy.close();
      return processesMentioning(dir);
    },
  };
}
