// The etcd clients' lock kinds against three real etcd members: etcd-rw's readers
// and writers in one queue by create revision, and waiters called off by their
// AbortSignal (etcd-queue, etcd-queue-cancel-delete, etcd-rw), with what the
// server holds afterwards read back to prove it.
import { describe, it, expect } from "vitest";
import { Toxiproxy } from "toxiproxy-node-client";
import { CANCEL_UNKNOWN, type AcquireRequest, type Hold, type LockClient, type Outcome } from "../../../clients/index.ts";
import { etcdKeyRanges, MUTEX_PREFIX } from "../places.ts";
import { QUEUE_PREFIX } from "../queue.ts";
import { RW_PREFIX } from "../rw.ts";
import { UnknownOutcome } from "../../../clients/lock.ts";
import { useEtcdCluster, held, settled, sleep } from "./cluster.ts";
import { CLIENTS } from "../../index.ts";

const cluster = useEtcdCluster("fc-etcd-kinds-");
const { lock, keysUnder } = cluster;

const read: AcquireRequest = { mode: "read" };
const write: AcquireRequest = { mode: "write" };

/** Until `n` keys are under `prefix` (a waiter's key is put): a waiter has surely queued. */
async function queued(prefix: string, n: number): Promise<void> {
  for (let i = 0; i < 100 && (await keysUnder(prefix)).length < n; i++) await sleep(20);
  expect(await keysUnder(prefix)).toHaveLength(n);
}

/** The acquire's key in etcd, from the lease its ok value names. */
const rwKey = (k: string, mode: "read" | "write", h: Hold): string => `${RW_PREFIX}/${k}/${mode}/${h.extra!.lease}`;

describe("etcd-rw", () => {
  it("two readers hold at once; a writer waits for both; fences are the keys' create revisions", async () => {
    const [r1, r2, w] = ["ra", "rb", "wa"].map((p) => lock("etcd-rw", p));
    const h1 = held(await r1.acquire("shared", 5000, 0, read));
    const h2 = held(await r2.acquire("shared", 5000, 0, read));
    expect(h2.fence).toBeGreaterThan(h1.fence!);
    const writing = w.acquire("shared", 5000, 8000, write);
    const written = settled(writing);
    await queued(`${RW_PREFIX}/shared/`, 3);
    // Each hold's fence is its own key's create revision, the writer's the youngest.
    const keys = await keysUnder(`${RW_PREFIX}/shared/`);
    expect(keys.slice(0, 2)).toEqual([
      { key: rwKey("shared", "read", h1), createRevision: h1.fence },
      { key: rwKey("shared", "read", h2), createRevision: h2.fence },
    ]);
    expect(keys[2].key).toMatch(new RegExp(`^${RW_PREFIX}/shared/write/`));
    await r1.release("shared", h1);
    await sleep(300);
    expect(written()).toBe(false);
    expect(await r2.release("shared", h2)).toEqual({ type: "ok", value: { released: true } });
    const hw = held(await writing);
    expect(hw.fence).toBe(keys[2].createRevision);
    // It last waited behind the second reader.
    expect(hw.extra).toMatchObject({ behind: h2.owner });
    expect(await w.release("shared", hw)).toEqual({ type: "ok", value: { released: true } });
    expect(await keysUnder(`${RW_PREFIX}/shared/`)).toEqual([]);
  });

  it("a writer excludes readers; a reader waits for the earlier writer, even behind readers that hold", async () => {
    const [w, r1, r2] = ["wb", "rc", "rd"].map((p) => lock("etcd-rw", p));
    const hw = held(await w.acquire("excl", 5000, 0, write));
    expect(await r1.acquire("excl", 5000, 0, read)).toEqual({ type: "fail", error: "busy", value: { behind: hw.owner } });
    const reading = r1.acquire("excl", 5000, 8000, read);
    const isRead = settled(reading);
    await sleep(300);
    expect(isRead()).toBe(false);
    await w.release("excl", hw);
    const h1 = held(await reading);
    expect(h1.fence).toBeGreaterThan(hw.fence!);
    expect(h1.extra).toMatchObject({ behind: hw.owner });
    // A writer queued behind a holding reader holds back the readers after it.
    const w2 = lock("etcd-rw", "we");
    const writing = w2.acquire("excl", 5000, 8000, write);
    await queued(`${RW_PREFIX}/excl/`, 2);
    const w2Owner = (await cluster.admin.getAll().prefix(`${RW_PREFIX}/excl/write/`).strings());
    expect(await r2.acquire("excl", 5000, 0, read)).toEqual({ type: "fail", error: "busy", value: { behind: Object.values(w2Owner)[0] } });
    await r1.release("excl", h1);
    const hw2 = held(await writing);
    expect(hw2.owner).toBe(Object.values(w2Owner)[0]);
    expect(hw2.fence).toBeGreaterThan(h1.fence!);
    await w2.release("excl", hw2);
  });

  it("an acquire without a mode is a writer (the mutex)", async () => {
    const [a, b] = ["wf", "rg"].map((p) => lock("etcd-rw", p));
    const ha = held(await a.acquire("plain", 5000, 0));
    expect((await keysUnder(`${RW_PREFIX}/plain/write/`)).map((x) => x.key)).toEqual([rwKey("plain", "write", ha)]);
    expect(await b.acquire("plain", 5000, 0)).toMatchObject({ type: "fail", error: "busy" });
    await a.release("plain", ha);
  });

  it("a run's clean-up ranges (etcdKeyRanges) take its keys, a waiter's too", async () => {
    const [a, b] = ["wh", "ri"].map((p) => lock("etcd-rw", p));
    held(await a.acquire("run9-k1", 30_000, 0, write));
    void b.acquire("run9-k1", 30_000, 10_000, read).catch(() => {});
    await queued(`${RW_PREFIX}/run9-k1/`, 2);
    // The adapter programs' keys too: etcd's Go Mutex under its own prefix.
    const go = lock("etcd-mutex-go", "gh");
    held(await go.acquire("run9-k2", 30_000, 0));
    expect(await keysUnder(`${MUTEX_PREFIX}/run9-k2/`)).toHaveLength(1);
    let deleted = 0;
    for (const range of etcdKeyRanges("run9-")) deleted += Number((await cluster.admin.delete().prefix(range).exec()).deleted);
    expect(deleted).toBe(3);
    expect(await keysUnder(`${RW_PREFIX}/`)).toEqual([]);
    expect(await keysUnder(`${MUTEX_PREFIX}/run9-`)).toEqual([]);
  });
});

/** Where each cancellable client keeps the keys of lock `k`. */
const prefixOf = (client: string, k: string): string => (client === "etcd-rw" ? `${RW_PREFIX}/${k}/` : `${QUEUE_PREFIX}/${k}/`);

describe.each(["etcd-queue", "etcd-queue-cancel-delete", "etcd-rw"])("%s cancelled", (client) => {
  const k = (name: string) => `${client}-${name}`;

  it("an aborted wait fails cancelled, naming its owner and whom it waited behind, and leaves no key behind", async () => {
    const [a, b, c] = ["ca", "cb", "cc"].map((p) => lock(client, p));
    const ha = held(await a.acquire(k("abort"), 5000, 0, write));
    const stop = new AbortController();
    const waiting = b.acquire(k("abort"), 5000, 10_000, { ...write, signal: stop.signal });
    await queued(prefixOf(client, k("abort")), 2);
    const t = Date.now();
    stop.abort();
    const r = await waiting;
    expect(Date.now() - t).toBeLessThan(1000);
    expect(r).toEqual({ type: "fail", error: "cancelled", value: { owner: expect.stringMatching(/^cb-h\d+$/), behind: ha.owner } });
    // The holder's key is the only one left, and the next waiter is behind the holder, not the cancelled one.
    expect((await keysUnder(prefixOf(client, k("abort")))).map((x) => x.createRevision)).toEqual([ha.fence]);
    const next = c.acquire(k("abort"), 5000, 5000, write);
    await queued(prefixOf(client, k("abort")), 2);
    await a.release(k("abort"), ha);
    const hc = held(await next);
    expect(hc.extra).toMatchObject({ behind: ha.owner });
    await c.release(k("abort"), hc);
  });

  it("a signal aborted before the acquire queues nothing and fails cancelled; one never aborted changes nothing", async () => {
    const a = lock(client, "cd");
    const r = await a.acquire(k("early"), 5000, 0, { ...write, signal: AbortSignal.abort() });
    expect(r).toMatchObject({ type: "fail", error: "cancelled" });
    expect(await keysUnder(prefixOf(client, k("early")))).toEqual([]);
    const h = held(await a.acquire(k("early"), 5000, 0, { ...write, signal: new AbortController().signal }));
    expect(h.extra).not.toHaveProperty("behind");
    await a.release(k("early"), h);
  });
});

describe("etcd-mutex-go cancelled (etcd's Go concurrency.Mutex, its Lock's context cancelled)", () => {
  it("says it can cancel; an aborted wait fails cancelled with its owner, its key gone, and the next waiter is granted behind the holder", async () => {
    expect(CLIENTS["etcd-mutex-go"].kinds).toEqual({ cancel: true });
    const [a, b, c] = ["ga", "gb", "gc"].map((p) => lock("etcd-mutex-go", p));
    const ha = held(await a.acquire("go-abort", 5000, 0));
    const stop = new AbortController();
    const waiting = b.acquire("go-abort", 5000, 10_000, { signal: stop.signal });
    await queued(`${MUTEX_PREFIX}/go-abort/`, 2);
    const t = Date.now();
    stop.abort();
    const r = await waiting;
    expect(Date.now() - t).toBeLessThan(2000);
    expect(r).toEqual({ type: "fail", error: "cancelled", value: { owner: expect.stringMatching(/^gba\d+-h\d+$/) } });
    // The holder's key is the only one left: the cancelled waiter's went with its lease.
    expect((await keysUnder(`${MUTEX_PREFIX}/go-abort/`)).map((x) => x.createRevision)).toEqual([ha.fence]);
    const next = c.acquire("go-abort", 5000, 5000);
    await queued(`${MUTEX_PREFIX}/go-abort/`, 2);
    await a.release("go-abort", ha);
    const hc = held(await next);
    expect(hc.fence!).toBeGreaterThan(ha.fence!);
    await c.release("go-abort", hc);
    // The program that was cancelled goes on: it takes the lock now free.
    await b.release("go-abort", held(await b.acquire("go-abort", 5000, 2000)));
    expect(await keysUnder(`${MUTEX_PREFIX}/go-abort/`)).toEqual([]);
  });
});

describe("a cancel that gets no answer", () => {
  it.each(["etcd-queue", "etcd-queue-cancel-delete"])("%s: cancel-unknown, and its key holds up the queue until its lease expires", async (client) => {
    // The waiter reaches one member through a proxy of its own, which then stops passing data both ways.
    const toxiproxy = new Toxiproxy(cluster.proxy.url);
    const via = await toxiproxy.createProxy({ name: `waiter-${client}`, listen: "127.0.0.1:0", upstream: `${cluster.endpoints[0].host}:${cluster.endpoints[0].port}` });
    const [host, port] = [via.listen.split(":")[0], Number(via.listen.split(":")[1])];
    const k = `${client}-lost`;
    const a = lock(client, "ua"), c = lock(client, "uc");
    const b: LockClient = lock(client, "ub", [{ name: "via-proxy", host, port }]);
    const ha = held(await a.acquire(k, 5000, 0));
    const stop = new AbortController();
    const waiting: Promise<Outcome<Hold>> = b.acquire(k, 6000, 20_000, { signal: stop.signal });
    void waiting.catch(() => {});
    await queued(`${QUEUE_PREFIX}/${k}/`, 2);
    await via.addToxic({ type: "timeout", name: "cut", stream: "downstream", toxicity: 1, attributes: { timeout: 0 } } as never);
    await via.addToxic({ type: "timeout", name: "cut-up", stream: "upstream", toxicity: 1, attributes: { timeout: 0 } } as never);
    stop.abort();
    const err = await waiting.then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownOutcome);
    expect((err as UnknownOutcome).error).toBe(CANCEL_UNKNOWN);
    // Its key is still queued behind the holder: the next waiter waits behind it...
    const waiterKey = (await keysUnder(`${QUEUE_PREFIX}/${k}/`))[1];
    expect(waiterKey).toBeDefined();
    await a.release(k, ha);
    const t = Date.now();
    const hc = held(await c.acquire(k, 5000, 10_000));
    // ...until its lease (6 s, no longer kept alive) expires, and names it.
    expect(Date.now() - t).toBeGreaterThan(200);
    expect(hc.extra).toMatchObject({ behind: expect.stringMatching(/^ub-h\d+$/) });
    await c.release(k, hc);
    await via.remove();
  });
});
