// The lock kinds of the ZooKeeper reference adapters (kazoo, Curator), driven
// through ProgramClient against three real ZooKeeper servers, the servers read to
// prove what the programs say: readers share and a writer excludes, a semaphore of
// 2 admits two, a Curator re-entry keeps its owner and its fence (the same node)
// and only the outermost release frees the lock, an aborted wait is answered
// fail "cancelled" with no node of it left behind, and a kazoo grant whose node
// read loses the connection is still a hold, not a node left for nobody.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import zookeeper from "node-zookeeper-client";
import { type Endpoint, type Hold, type LockClient, type MakeClient, type Outcome } from "../../clients/index.ts";
import { CLIENTS } from "../../backends/index.ts";
import { ZK_LOCK_ROOT } from "../../backends/zookeeper/places.ts";
import { rng, sleep } from "../../lib/index.ts";
import { eventually } from "../helpers.ts";
import { startZkServers, type ZkServers } from "../../backends/zookeeper/test/servers.ts";

const ADAPTERS = ["kazoo", "curator"] as const;
const made: Record<string, MakeClient> = {};
let servers: ZkServers;
let endpoints: Endpoint[];
let admin: zookeeper.Client;
const clients: LockClient[] = [];

/** A client of `kind`, by default to every server with a 2 s command timeout and a 4 s session. */
function client(kind: string, prefix: string, own: { endpoints?: Endpoint[]; commandTimeoutMs?: number; ttlMs?: number } = {}): LockClient {
  const c = made[kind]({ id: clients.length, endpoints, ownerPrefix: prefix, commandTimeoutMs: 2000, rng: rng(1, prefix), options: {}, backend: "zookeeper", ttlMs: 4000, ...own });
  clients.push(c);
  return c;
}

function held(r: Outcome<Hold>): Hold {
  if (r.type !== "ok") throw new Error(`not acquired: ${JSON.stringify(r)}`);
  return r.value;
}

/** Every node under a path, depth first, as the servers have them ("a/b" for a grandchild). */
async function nodesUnder(path: string): Promise<string[]> {
  const children = await new Promise<string[]>((resolve, reject) =>
    admin.getChildren(path, (err, c) => (err && (err as zookeeper.Exception).getCode?.() !== zookeeper.Exception.NO_NODE ? reject(err) : resolve(c ?? []))),
  );
  const all: string[] = [];
  for (const c of children.sort()) all.push(c, ...(await nodesUnder(`${path}/${c}`)).map((g) => `${c}/${g}`));
  return all;
}

beforeAll(async () => {
  for (const name of ADAPTERS) made[name] = await CLIENTS[name].load();
  servers = await startZkServers("fc-adapter-kinds-");
  ({ endpoints, admin } = servers);
  // A JVM's first start is the slowest: here, not in a test's time.
  await client("curator", "warm-up").whenStarted?.();
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  expect(await servers?.stop()).toEqual([]);
});

describe("lock kinds of the ZooKeeper reference adapters", () => {
  it("declare what they offer, from their manifests", () => {
    expect(CLIENTS.kazoo.kinds).toEqual({ rw: true, semaphore: true, cancel: true });
    expect(CLIENTS.curator.kinds).toEqual({ reentrant: { fenceOnReentry: "same" }, rw: true, semaphore: true, cancel: true });
  });

  for (const name of ADAPTERS) {
    it(`${name}: two readers hold at once, a writer waits for both and then excludes a reader`, async () => {
      const key = `rw-${name}`;
      const [r1, r2, w] = ["r1", "r2", "w"].map((p) => client(name, `${name}-${p}`));
      const a = held(await r1.acquire(key, 4000, 2000, { mode: "read" }));
      const b = held(await r2.acquire(key, 4000, 2000, { mode: "read" }));
      expect(a.fence).not.toBe(b.fence);
      expect(await w.acquire(key, 4000, 300, { mode: "write" })).toMatchObject({ type: "fail", error: "timeout" });
      const writing = w.acquire(key, 4000, 5000, { mode: "write" });
      await r1.release(key, a);
      await r2.release(key, b);
      const hw = held(await writing);
      expect(hw.fence!).toBeGreaterThan(Math.max(a.fence!, b.fence!));
      expect(await r1.acquire(key, 4000, 300, { mode: "read" })).toMatchObject({ type: "fail", error: "timeout" });
      expect(await w.release(key, hw)).toEqual({ type: "ok", value: { released: true } });
      await eventually(async () => (await nodesUnder(`${ZK_LOCK_ROOT}/${key}`)).length === 0, 5000);
    }, 30_000);

    it(`${name}: a semaphore of 2 admits two, the third waits (or is withdrawn) until one is released`, async () => {
      const key = `sem-${name}`;
      const [c1, c2, c3] = ["s1", "s2", "s3"].map((p) => client(name, `${name}-${p}`));
      const a = held(await c1.acquire(key, 4000, 2000, { permits: 2 }));
      const b = held(await c2.acquire(key, 4000, 2000, { permits: 2 }));
      expect(new Set([a.fence, b.fence]).size).toBe(2);
      expect(await c3.acquire(key, 4000, 300, { permits: 2 })).toMatchObject({ type: "fail", error: "timeout" });
      const nodes = await nodesUnder(`${ZK_LOCK_ROOT}/${key}`);
      // A waiter for a lease withdrawn: cancelled, and the semaphore's nodes as they were.
      const abort = new AbortController();
      const withdrawn = c3.acquire(key, 4000, 5000, { permits: 2, signal: abort.signal });
      await new Promise((r) => setTimeout(r, 300));
      abort.abort();
      expect(await withdrawn).toMatchObject({ type: "fail", error: "cancelled" });
      expect(await nodesUnder(`${ZK_LOCK_ROOT}/${key}`)).toEqual(nodes);
      const third = c3.acquire(key, 4000, 5000, { permits: 2 });
      await c1.release(key, a);
      const c = held(await third);
      expect(c.fence!).toBeGreaterThan(b.fence!);
      for (const [cl, h] of [[c2, b], [c3, c]] as const) expect(await cl.release(key, h)).toEqual({ type: "ok", value: { released: true } });
    }, 30_000);

    it(`${name}: an aborted wait is answered fail cancelled and leaves no node behind`, async () => {
      const key = `cancel-${name}`;
      const [holder, waiter] = ["h", "w"].map((p) => client(name, `${name}-${p}`));
      const h = held(await holder.acquire(key, 4000, 2000));
      const path = `${ZK_LOCK_ROOT}/${key}`;
      const abort = new AbortController();
      const waiting = waiter.acquire(key, 4000, 8000, { signal: abort.signal });
      // Queued: its node is on the server behind the holder's.
      expect(await eventually(async () => (await nodesUnder(path)).length === 2, 10_000)).toBe(true);
      const t0 = Date.now();
      abort.abort();
      const r = await waiting;
      expect(r).toMatchObject({ type: "fail", error: "cancelled", value: { owner: expect.stringMatching(new RegExp(`^${name}-w`)) } });
      expect(Date.now() - t0).toBeLessThan(3000);
      // The adapter saw its node gone through its own session; this reader's
      // server may be a follower that has not applied the delete yet (ZooKeeper
      // orders reads per session, not across them): give it a moment, not more.
      const holderOnly = [String(h.extra!.node).split("/").pop()];
      await eventually(async () => JSON.stringify(await nodesUnder(path)) === JSON.stringify(holderOnly), 2000);
      expect(await nodesUnder(path)).toEqual(holderOnly);
      // Aborted before it is sent: nothing queued, nothing asked.
      const before = new AbortController();
      before.abort();
      expect(await waiter.acquire(key, 4000, 2000, { signal: before.signal })).toEqual({ type: "fail", error: "cancelled" });
      await holder.release(key, h);
      // The waiter's program goes on: it takes the lock now free.
      await waiter.release(key, held(await waiter.acquire(key, 4000, 2000)));
    }, 30_000);
  }

  it("curator: a re-entry keeps the owner and the fence (the same node); the inner release keeps the lock, the outer frees it", async () => {
    const key = "reentrant-curator";
    const [a, b] = ["a", "b"].map((p) => client("curator", `curator-re-${p}`));
    const outer = held(await a.acquire(key, 4000, 2000));
    const inner = held(await a.acquire(key, 4000, 2000, { reenter: outer }));
    expect(inner.owner).toBe(outer.owner);
    expect(inner.fence).toBe(outer.fence);
    expect(inner.extra).toMatchObject({ node: outer.extra!.node, entries: 2 });
    expect(await nodesUnder(`${ZK_LOCK_ROOT}/${key}`)).toHaveLength(1);
    expect(await a.release(key, inner)).toMatchObject({ type: "ok", value: { released: true } });
    expect(await b.acquire(key, 4000, 300)).toMatchObject({ type: "fail", error: "timeout" });
    expect(await a.release(key, outer)).toEqual({ type: "ok", value: { released: true } });
    const next = held(await b.acquire(key, 4000, 2000));
    expect(next.fence!).toBeGreaterThan(outer.fence!);
    // A re-entry of a hold this program does not have is refused, nothing sent.
    expect(await a.acquire(key, 4000, 300, { reenter: next })).toMatchObject({ type: "fail", error: "not-owner" });
    await b.release(key, next);
  }, 30_000);

  it("kazoo: a grant whose node read loses the connection reads it again once kazoo reconnects: ok with its fence, and no node left holding the lock for nobody", async () => {
    const key = "grant-read-lost-kazoo";
    // Replies 600 ms late: after the holder's release the waiter hears of it at
    // +600 ms, lists the queue (its answer at +1200 ms), finds itself first and
    // reads its own node for the fence (answer due at +1800 ms). The link is
    // reset at +1500 ms, in the middle of that read, and back 100 ms later.
    const { proxy: p, endpoint } = await servers.linkToZk1(key, 600);
    const waiter = client("kazoo", "kazoo-lr-waiter", { endpoints: [endpoint], commandTimeoutMs: 5000, ttlMs: 8000 });
    const [holder, next] = ["holder", "next"].map((x) => client("kazoo", `kazoo-lr-${x}`));
    const h = held(await holder.acquire(key, 4000, 0));
    const waiting = waiter.acquire(key, 8000, 15_000);
    void waiting.catch(() => {});
    await eventually(async () => (await nodesUnder(`${ZK_LOCK_ROOT}/${key}`)).length === 2, 10_000);
    await holder.release(key, h);
    await sleep(1500);
    await p.update({ enabled: false } as never);
    await sleep(100);
    await p.update({ enabled: true } as never);
    // kazoo granted it; the adapter waited out the lost connection rather than answer error and keep the node.
    const w = held(await waiting);
    expect(w.fence!).toBeGreaterThan(h.fence!);
    expect(await nodesUnder(`${ZK_LOCK_ROOT}/${key}`)).toEqual([String(w.extra!.node).split("/").pop()]);
    expect(await waiter.release(key, w)).toMatchObject({ type: "ok", value: { released: true } });
    // Nothing of the waiter's stays in the queue: the next client is granted at once.
    await next.release(key, held(await next.acquire(key, 4000, 2000)));
    await p.remove();
  }, 60_000);
});
