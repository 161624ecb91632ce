// Three real etcd members for a test file of etcd lock clients (etcd.test.ts,
// etcd-kinds.test.ts): started before its tests, stopped after them with every
// client the file made, and an admin client to read the keys the locks left.
import { beforeAll, afterAll, expect } from "vitest";
import { Etcd3 } from "etcd3";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import { startEtcdCluster } from "../server.ts";
import { startProxyServer, type ProxyServer } from "../../../proxy/index.ts";
import { type Endpoint, type Hold, type LockClient, type MakeClient, type Outcome } from "../../../clients/index.ts";
import { CLIENTS } from "../../index.ts";
import { rng } from "../../../lib/index.ts";
import { tempRunDir, processesMentioning } from "../../../test/helpers.ts";

export interface EtcdForTests {
  /** The members' client addresses. */
  endpoints: Endpoint[];
  /** An etcd3 client of the test's own, for reading what the locks left. */
  admin: Etcd3;
  /** The fault proxy the members' peer traffic goes through; a test may add proxies of its own. */
  proxy: ProxyServer;
  /** Each client kind's maker, its module loaded once (clients are made synchronously). */
  made: Record<string, MakeClient>;
  /** A lock client of `kind`, closed after the file's tests. */
  lock(kind: string, prefix: string, eps?: Endpoint[]): LockClient;
  /** The keys under a prefix with their create revisions, oldest first. */
  keysUnder(prefix: string): Promise<Array<{ key: string; createRevision: number }>>;
}

/** Starts the members before the file's tests and stops them after; fields are set once beforeAll ran. */
export function useEtcdCluster(dirPrefix: string): EtcdForTests {
  let dir: string;
  let group: ProcessGroup;
  const locks: LockClient[] = [];
  const env = { made: {} } as EtcdForTests;
  env.lock = (kind, prefix, eps = env.endpoints) => {
    const c = env.made[kind]({ endpoints: eps, ownerPrefix: prefix, commandTimeoutMs: 2000, rng: rng(3, prefix), options: {} });
    locks.push(c);
    return c;
  };
  env.keysUnder = async (prefix) => {
    const res = await env.admin.getAll().prefix(prefix).sort("Create", "Ascend").exec();
    return res.kvs.map((kv) => ({ key: kv.key.toString(), createRevision: Number(kv.create_revision) }));
  };
  beforeAll(async () => {
    for (const [name, kind] of Object.entries(CLIENTS)) env.made[name] = await kind.load();
    dir = tempRunDir(dirPrefix);
    group = new ProcessGroup(dir);
    env.proxy = await startProxyServer({ port: 0 });
    const cluster = await startEtcdCluster({ group, ports: new PortPlan(0), runDir: dir, toxiproxyUrl: env.proxy.url });
    env.endpoints = cluster.nodes.map((n) => ({ name: n.name, host: n.host, port: n.port }));
    env.admin = new Etcd3({ hosts: env.endpoints.map((e) => `http://${e.host}:${e.port}`) });
  });
  afterAll(async () => {
    await Promise.all(locks.map((l) => l.close()));
    env.admin?.close();
    await group?.stopAll();
    await env.proxy?.close();
    expect(processesMentioning(dir)).toEqual([]);
  });
  return env;
}

export function held(r: Outcome<Hold>): Hold {
  if (r.type !== "ok") throw new Error(`not acquired: ${JSON.stringify(r)}`);
  return r.value;
}

/** Whether `p` has settled yet, asked at any time. */
export function settled<T>(p: Promise<T>): () => boolean {
  let done = false;
  void p.finally(() => (done = true)).catch(() => {});
  return () => done;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
