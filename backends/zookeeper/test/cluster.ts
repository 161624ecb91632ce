// ZooKeeper's servers for a test file of lock clients (backends/zookeeper/test/servers.ts), with
// what such a file asks of them: the ZooKeeper lock clients, closed before the
// servers stop, and the lock nodes of a key as the servers have them.
import { beforeAll, afterAll, expect } from "vitest";
import { type Endpoint, type LockClient, type MakeClient } from "../../../clients/index.ts";
import { CLIENTS } from "../../index.ts";
import { rng } from "../../../lib/index.ts";
import { startZkServers, type ZkServers } from "./servers.ts";

export interface ZkLockServers {
  servers(): ZkServers;
  /** The lock nodes of a key, as the servers have them, in queue order. */
  nodesOf(key: string): Promise<string[]>;
  /** A lock client of `kind` (zookeeper, zookeeper-naive, zookeeper-rw), by default over every server. */
  lock(kind: string, ownerPrefix: string, endpoints?: Endpoint[], commandTimeoutMs?: number): LockClient;
}

const KINDS = ["zookeeper", "zookeeper-naive", "zookeeper-rw"];

export function useZkLockServers(prefix: string): ZkLockServers {
  const made: Record<string, MakeClient> = {};
  const locks: LockClient[] = [];
  let servers: ZkServers;
  beforeAll(async () => {
    for (const kind of KINDS) made[kind] = await CLIENTS[kind].load();
    servers = await startZkServers(prefix);
  }, 60_000);
  afterAll(async () => {
    for (const l of locks) await l.close();
    expect(await servers?.stop()).toEqual([]);
  });
  return {
    servers: () => servers,
    nodesOf: (key) => servers.nodesOf(key),
    lock: (kind, ownerPrefix, eps = servers.endpoints, commandTimeoutMs = 2000) => {
      const c = made[kind]({ endpoints: eps, ownerPrefix, commandTimeoutMs, rng: rng(3, ownerPrefix), options: {} });
      locks.push(c);
      return c;
    },
  };
}
