// The lock kinds of the Redisson adapter (adapters/java/redisson/RedissonLock.java),
// driven through ProgramClient against a real redis-server, Redis read to prove what
// the programs say: RReadWriteLock's readers share a hash and a writer excludes them,
// an RPermitExpirableSemaphore of 2 admits two, an RLock re-entry counts one more on
// the same owner's field (no fence) and RFencedLock's takes a new token, only the last
// release frees either, and a cancelled wait is answered fail cancelled with nothing of
// it left in Redis. And RedissonMultiLock over five real redis-servers: its key on all
// five while held, on none after. JVMs start once, in beforeAll, and serve every test.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Redis } from "ioredis";
import { type Endpoint, type Hold, type LockClient, type Outcome } from "../../clients/index.ts";
import { CLIENTS } from "../../backends/index.ts";
import { ProcessGroup } from "../../cluster/processes.ts";
import { PortPlan } from "../../cluster/ports.ts";
import { startRedisNodes } from "../../backends/redis/server.ts";
import { rng } from "../../lib/index.ts";
import { eventually, tempRunDir } from "../helpers.ts";

let group: ProcessGroup;
let one: Endpoint[];
let five: Endpoint[];
let redis: Redis;
let nodes: Redis[];
const clients: LockClient[] = [];
let plain: LockClient[];
let fenced: LockClient;
let multi: LockClient;

/**
 * Per program: whether making its Redisson clients had ended by the time it answered
 * init, made or failed (its log line either way, give or take the pipes' order): with
 * the command timeout of 1 s below, five JVMs making them at once may time out.
 */
const readyAtInit = new Map<string, boolean>();

async function client(name: string, prefix: string, endpoints: Endpoint[], backend: string): Promise<LockClient> {
  const made = await CLIENTS[name].load();
  const lines: string[] = [];
  const c = made({ id: clients.length, endpoints, ownerPrefix: prefix, commandTimeoutMs: 1000, rng: rng(1, prefix), options: {}, backend, ttlMs: 4000, log: (l) => lines.push(l) });
  clients.push(c);
  await c.whenStarted?.();
  // Its stderr and stdout are two pipes: the line written before init_ok may be read a moment after it.
  readyAtInit.set(prefix, await eventually(async () => lines.some((l) => /Redisson client\(s\) made in|clients not made at init/.test(l)), 100));
  return c;
}

function held(r: Outcome<Hold>): Hold {
  if (r.type !== "ok") throw new Error(`not acquired: ${JSON.stringify(r)}`);
  return r.value;
}

const released = { type: "ok", value: { released: true } };

beforeAll(async () => {
  const dir = tempRunDir("fc-redisson-kinds-");
  group = new ProcessGroup(dir);
  const started = await startRedisNodes(group, new PortPlan(0), 6, { runDir: dir });
  const eps = started.map((n, i) => ({ name: `redis-${i + 1}`, host: n.host, port: n.port }));
  one = eps.slice(0, 1);
  five = eps.slice(1);
  redis = new Redis({ host: one[0].host, port: one[0].port });
  nodes = five.map((e) => new Redis({ host: e.host, port: e.port }));
  // Every JVM at once: their starts (2-4 s each) overlap.
  [plain, fenced, multi] = await Promise.all([
    Promise.all(["p1", "p2", "p3"].map((p) => client("redisson", p, one, "redis"))),
    client("redisson-fenced", "f1", one, "redis"),
    client("redisson-multilock", "m1", five, "redlock"),
  ]);
  // A first lock call loads Redisson's lock code (a second or two on a busy machine): here, under a
  // long wait (fencecheck's deadline is wait + 2 x command timeout), not in a test's time.
  await Promise.all([...plain, fenced, multi].map(async (c, i) => c.release(`warm-${i}`, held(await c.acquire(`warm-${i}`, 4000, 30_000)))));
}, 90_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  redis?.disconnect();
  for (const n of nodes ?? []) n.disconnect();
  await group?.stopAll();
});

describe("the Redisson adapter's lock kinds, against a real redis-server", () => {
  it("declare what Redisson gives, from their manifests", () => {
    expect(CLIENTS.redisson.kinds).toEqual({ reentrant: { fenceOnReentry: "same" }, rw: true, semaphore: true, cancel: true });
    // RFencedLock's script INCRs the token at every grant, a re-entry's too; no token for a read-write lock or a permit.
    expect(CLIENTS["redisson-fenced"].kinds).toEqual({ reentrant: { fenceOnReentry: "new" }, cancel: true });
    expect(CLIENTS["redisson-multilock"].kinds).toEqual({});
    expect(CLIENTS["redisson-redlock"].describe).toMatch(/Deprecated/);
  });

  it("each program answers init once making its Redisson clients has ended (made or failed, at most 20 s): the run's clock starts with them ready, not charged to a first acquire or a scenario's timed faults", () => {
    // Made after init, they took half a second to 8 s more: none would be there yet.
    expect(Object.fromEntries(readyAtInit)).toEqual({ p1: true, p2: true, p3: true, f1: true, m1: true });
  });

  it("RReadWriteLock: two readers share the hash, a writer waits for both and then excludes a reader", async () => {
    const key = "rw";
    const [r1, r2, w] = plain;
    const a = held(await r1.acquire(key, 4000, 1000, { mode: "read" }));
    const b = held(await r2.acquire(key, 4000, 1000, { mode: "read" }));
    expect([a.fence, b.fence]).toEqual([null, null]);
    expect(await redis.hget(key, "mode")).toBe("read");
    // Redisson's read hash: mode, and a field per reading thread.
    expect(await redis.hlen(key)).toBe(3);
    expect(await w.acquire(key, 4000, 300, { mode: "write" })).toMatchObject({ type: "fail", error: "timeout" });
    const writing = w.acquire(key, 4000, 5000, { mode: "write" });
    expect(await r1.release(key, a)).toEqual(released);
    expect(await r2.release(key, b)).toEqual(released);
    const hw = held(await writing);
    expect(await redis.hget(key, "mode")).toBe("write");
    expect(await r1.acquire(key, 4000, 300, { mode: "read" })).toMatchObject({ type: "fail", error: "timeout" });
    expect(await w.release(key, hw)).toEqual(released);
    expect(await redis.exists(key)).toBe(0);
  }, 20_000);

  it("RPermitExpirableSemaphore of 2: admits two, a third waits until one is released", async () => {
    const key = "sem";
    const [c1, c2, c3] = plain;
    const a = held(await c1.acquire(key, 4000, 1000, { permits: 2 }));
    const b = held(await c2.acquire(key, 4000, 1000, { permits: 2 }));
    expect(a.extra!.permit).not.toBe(b.extra!.permit);
    // Redisson keeps the permits given out in a sorted set by expiry, and the free ones as a count.
    const leases = `{${key}}:timeout`;
    const given = async (): Promise<string[]> => (await redis.zrangeBuffer(leases, "0", "-1")).map((id) => id.toString("hex")).sort();
    // (Redisson stores a permit's id as the bytes its hex names.)
    expect(await given()).toEqual([a.extra!.permit, b.extra!.permit].sort());
    expect(await redis.get(key)).toBe("0");
    expect(await c3.acquire(key, 4000, 300, { permits: 2 })).toMatchObject({ type: "fail", error: "timeout" });
    const third = c3.acquire(key, 4000, 5000, { permits: 2 });
    expect(await c1.release(key, a)).toEqual(released);
    const c = held(await third);
    expect(await given()).toEqual([b.extra!.permit, c.extra!.permit].sort());
    for (const [cl, h] of [[c2, b], [c3, c]] as const) expect(await cl.release(key, h)).toEqual(released);
    expect(await redis.get(key)).toBe("2");
    // A released permit is not released twice.
    expect(await c3.release(key, c)).toMatchObject({ type: "fail", error: "not-owner" });
  }, 20_000);

  it("RLock: a re-entry counts one more on the owner's field, no fence; only the last release frees it", async () => {
    const key = "re";
    const [a, b] = plain;
    const outer = held(await a.acquire(key, 4000, 1000));
    const inner = held(await a.acquire(key, 4000, 1000, { reenter: outer }));
    expect(inner.owner).toBe(outer.owner);
    expect([outer.fence, inner.fence]).toEqual([null, null]);
    expect(inner.extra).toMatchObject({ entries: 2 });
    // One field (the hold's thread), counted twice: the same hold, not a second one.
    expect(Object.values(await redis.hgetall(key))).toEqual(["2"]);
    expect(await b.acquire(key, 4000, 0)).toMatchObject({ type: "fail", error: "busy" });
    expect(await a.release(key, inner)).toMatchObject({ type: "ok", value: { released: true } });
    expect(Object.values(await redis.hgetall(key))).toEqual(["1"]);
    expect(await b.acquire(key, 4000, 0)).toMatchObject({ type: "fail", error: "busy" });
    expect(await a.release(key, outer)).toEqual(released);
    expect(await redis.exists(key)).toBe(0);
    const next = held(await b.acquire(key, 4000, 0));
    // A re-entry of a hold this program does not have is refused, nothing sent.
    expect(await a.acquire(key, 4000, 0, { reenter: next })).toMatchObject({ type: "fail", error: "not-owner" });
    expect(await b.release(key, next)).toEqual(released);
  }, 20_000);

  it("RFencedLock: a re-entry keeps the owner and takes a new token (fence_on_reentry new); only the last release frees it", async () => {
    const key = "fre";
    const outer = held(await fenced.acquire(key, 4000, 1000));
    const inner = held(await fenced.acquire(key, 4000, 1000, { reenter: outer }));
    expect(inner.owner).toBe(outer.owner);
    expect(inner.fence).toBe(outer.fence! + 1);
    expect(Number(await redis.get(`redisson_lock_token:{${key}}`))).toBe(inner.fence);
    expect(Object.values(await redis.hgetall(key))).toEqual(["2"]);
    // An RLock of another program is refused by the same hash.
    expect(await plain[0].acquire(key, 4000, 0)).toMatchObject({ type: "fail", error: "busy" });
    expect(await fenced.release(key, inner)).toMatchObject({ type: "ok", value: { released: true } });
    expect(Object.values(await redis.hgetall(key))).toEqual(["1"]);
    expect(await fenced.release(key, outer)).toEqual(released);
    expect(await redis.exists(key)).toBe(0);
  }, 20_000);

  it("cancel: a wait withdrawn is answered fail cancelled, and nothing of it is left in Redis", async () => {
    const key = "cancel";
    const [holder, waiter] = plain;
    const h = held(await holder.acquire(key, 4000, 1000));
    const abort = new AbortController();
    const waiting = waiter.acquire(key, 4000, 8000, { signal: abort.signal });
    // Waiting: subscribed to the lock's channel, as Redisson's waiters are.
    const channel = `redisson_lock__channel:{${key}}`;
    expect(await eventually(async () => ((await redis.pubsub("NUMSUB", channel)) as [string, number])[1] >= 1, 10_000)).toBe(true);
    const t0 = Date.now();
    abort.abort();
    const withdrawn = await waiting;
    expect(withdrawn).toMatchObject({ type: "fail", error: "cancelled", value: { owner: expect.stringMatching(/^p2a1-h/) } });
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(Object.keys(await redis.hgetall(key))).toHaveLength(1);
    // Released, the lock is not granted to the withdrawn waiter after all.
    expect(await holder.release(key, h)).toEqual(released);
    await new Promise((r) => setTimeout(r, 300));
    expect(await redis.exists(key)).toBe(0);
    // Aborted before it is sent: nothing asked.
    const before = new AbortController();
    before.abort();
    expect(await waiter.acquire(key, 4000, 1000, { signal: before.signal })).toEqual({ type: "fail", error: "cancelled" });
    // The waiter's program goes on: it takes the lock now free, under an owner of its own (never the withdrawn wait's).
    const next = held(await waiter.acquire(key, 4000, 1000));
    expect(next.owner).not.toBe((withdrawn as { value: { owner: string } }).value.owner);
    expect(await waiter.release(key, next)).toEqual(released);
  }, 20_000);

  it("RedissonMultiLock over five nodes: its key is on every node while held, on none after", async () => {
    const key = "multi";
    const h = held(await multi.acquire(key, 4000, 4000));
    expect(h.fence).toBeNull();
    const fields = await Promise.all(nodes.map((n) => n.hgetall(key)));
    // One field on each node, "<that node's client id>:<the hold's thread id>", counted once: the same thread everywhere.
    expect(fields.map((f) => Object.values(f))).toEqual(Array(5).fill(["1"]));
    expect(new Set(fields.map((f) => Object.keys(f)[0].split(":").pop())).size).toBe(1);
    expect(await multi.release(key, h)).toEqual(released);
    expect(await Promise.all(nodes.map((n) => n.exists(key)))).toEqual([0, 0, 0, 0, 0]);
  }, 20_000);
});
