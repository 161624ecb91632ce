// The ZooKeeper lock clients against three real ZooKeeper servers, with real
// faults on the clients' links through the fault proxy: waiters are served in the
// order they queued, fences are the lock nodes' czxids and only grow, a create
// whose reply is lost is found again with protection mode (and left behind as a
// ghost that blocks the lock without it), and a session that expires while
// holding is known as lost by the recipe and not by the naive client.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import zookeeper from "node-zookeeper-client";
import { type Endpoint, type Hold, type LockClient, type Outcome, type MakeClient } from "../../../clients/index.ts";
import { CLIENTS } from "../../index.ts";
import { ZK_LOCK_ROOT } from "../places.ts";
import { zxid } from "../session.ts";
import { rng, sleep } from "../../../lib/index.ts";
import { eventually } from "../../../test/helpers.ts";
import { startZkServers, type ZkServers } from "./servers.ts";

/** Each client kind's maker, its module loaded once for the file (clients are made synchronously below). */
const made: Record<string, MakeClient> = {};
beforeAll(async () => {
  for (const [name, kind] of Object.entries(CLIENTS)) made[name] = await kind.load();
});

let servers: ZkServers;
let endpoints: Endpoint[];
let admin: zookeeper.Client;
const locks: LockClient[] = [];

function lock(kind: string, prefix: string, eps: Endpoint[] = endpoints, commandTimeoutMs = 2000): LockClient {
  const c = made[kind]({ endpoints: eps, ownerPrefix: prefix, commandTimeoutMs, rng: rng(3, prefix), options: {} });
  locks.push(c);
  return c;
}

function held(r: Outcome<Hold>): Hold {
  if (r.type !== "ok") throw new Error(`not acquired: ${JSON.stringify(r)}`);
  return r.value;
}

/** The lock nodes of a key, as the servers have them (read up to date: servers.ts). */
const nodesOf = (key: string): Promise<string[]> => servers.nodesOf(key);

const czxidOf = (path: string): Promise<number> => new Promise((resolve, reject) => admin.exists(path, (err, stat) => (err || !stat ? reject(err ?? new Error(`${path} is gone`)) : resolve(zxid(stat.czxid)))));

beforeAll(async () => {
  servers = await startZkServers("fc-zk-client-");
  ({ endpoints, admin } = servers);
}, 60_000);

afterAll(async () => {
  for (const l of locks) await l.close();
  expect(await servers?.stop()).toEqual([]);
});

describe("zookeeper lock client", () => {
  it("serves waiters in the order they queued, each fence its node's czxid, fences increasing", async () => {
    const [a, b, c, d] = ["a", "b", "c", "d"].map((p) => lock("zookeeper", p));
    const first = held(await a.acquire("fifo", 1000, 5000));
    expect(first.fence).toBe(await czxidOf(`${ZK_LOCK_ROOT}/fifo/${first.extra!.node}`));
    expect(String(first.extra!.node)).toContain(`_c_${first.extra!.session}-a-h1-lock-`);
    const order: string[] = [];
    const waiting = [b, c, d].map(async (l, i) => {
      await sleep(300 * i);
      const h = held(await l.acquire("fifo", 1000, 8000));
      order.push(h.owner);
      await sleep(50);
      await l.release("fifo", h);
      return h;
    });
    await eventually(async () => (await nodesOf("fifo")).length === 4);
    expect(await a.release("fifo", first)).toEqual({ type: "ok", value: { released: true } });
    const holds = await Promise.all(waiting);
    expect(order).toEqual(["b-h1", "c-h1", "d-h1"]);
    const fences = [first, ...holds].map((h) => h.fence!);
    expect([...fences].sort((x, y) => x - y)).toEqual(fences);
    expect(new Set(fences).size).toBe(4);
    for (const h of holds) expect(h.extra!.queued_ms).toBeGreaterThan(0);
    // Every node deleted.
    expect(await nodesOf("fifo")).toEqual([]);
  }, 30_000);

  it("protection mode finds a created node whose reply was lost; the naive client leaves a ghost that blocks the lock", async () => {
    for (const kind of ["zookeeper", "zookeeper-naive"]) {
      const key = `lost-reply-${kind}`;
      const link = await servers.linkToZk1(`lost-reply-${kind}`);
      const l = lock(kind, kind, [link.endpoint], 3000);
      await l.release(key, held(await l.acquire(key, 3000, 1000)));
      // The create reaches the server; its reply is held back, and the connection
      // breaks before it is sent on. The session goes on on the next connection.
      const toxic = await link.proxy.addToxic({ name: "no-replies", type: "timeout", stream: "downstream", toxicity: 1, attributes: { timeout: 0 } } as never);
      const pending = l.acquire(key, 3000, kind === "zookeeper" ? 8000 : 3000);
      await eventually(async () => (await nodesOf(key)).length === 1);
      const cut = await link.proxy.update({ enabled: false } as never);
      await toxic.remove();
      await cut.update({ enabled: true } as never);
      const r = await pending;
      if (kind === "zookeeper") {
        const h = held(r);
        expect(await nodesOf(key)).toEqual([h.extra!.node]);
        expect(await l.release(key, h)).toEqual({ type: "ok", value: { released: true } });
        expect(await nodesOf(key)).toEqual([]);
      } else {
        // It sent the create again and queued behind its own first node, which nobody holds (and says so).
        expect(r).toMatchObject({ type: "fail", error: "orphan-node" });
        expect(await nodesOf(key)).toHaveLength(1);
        const other = lock("zookeeper", `other-${kind}`);
        expect(await other.acquire(key, 1000, 1500)).toMatchObject({ type: "fail", error: "timeout" });
        // Its session's end takes the ghost with it.
        await l.close();
        expect(await eventually(async () => (await nodesOf(key)).length === 0)).toBe(true);
      }
      await link.proxy.remove();
    }
  }, 60_000);

  it("a session that expires while holding: the recipe knows it lost the lock, the naive client renews as if not", async () => {
    for (const kind of ["zookeeper", "zookeeper-naive"]) {
      const key = `expiry-${kind}`;
      const link = await servers.linkToZk1(`expiry-${kind}`);
      const l = lock(kind, kind, [link.endpoint], 2000);
      const h = held(await l.acquire(key, 1000, 1000));
      // Cut off from every server for three session timeouts: the session expires and its node goes.
      await link.proxy.update({ enabled: false } as never);
      const next = lock("zookeeper", `next-${kind}`);
      const taken = held(await next.acquire(key, 1000, 5000));
      expect(taken.fence!).toBeGreaterThan(h.fence!);
      await sleep(2000);
      await link.proxy.update({ enabled: true } as never);
      if (kind === "zookeeper") {
        expect(await eventually(async () => l.lost!(h) === "session-expired")).toBe(true);
        expect(await l.renew(key, h, 1000)).toEqual({ type: "fail", error: "session-expired" });
        expect(await l.release(key, h)).toEqual({ type: "ok", value: { released: false, lost: "session-expired" } });
      } else {
        expect(l.lost!(h)).toBeNull();
        // CURATOR-206: a new session, and the renew says the lock is still held.
        expect(await eventually(async () => (await l.renew(key, h, 1000)).type === "ok", 10_000)).toBe(true);
        expect(await l.release(key, h)).toEqual({ type: "ok", value: { released: false } });
      }
      await next.release(key, taken);
      await link.proxy.remove();
    }
  }, 60_000);
});
