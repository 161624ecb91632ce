// The ZooKeeper lock clients' kinds beyond the mutex, against three real
// ZooKeeper servers: the shared-lock recipe (zookeeper-rw) lets readers hold
// together, queues a reader behind an earlier writer and a writer behind every
// earlier node; a waiter of either client whose AbortSignal fires deletes its node
// (read back from the servers) and fails "cancelled", and one whose delete gets no
// answer says it cannot know, its node left to stall the queue until its session ends.
import { describe, it, expect } from "vitest";
import type { Endpoint, Hold, Outcome } from "../../../clients/index.ts";
import { UnknownOutcome } from "../../../clients/lock.ts";
import { sleep } from "../../../lib/index.ts";
import { eventually } from "../../../test/helpers.ts";
import { useZkLockServers } from "./cluster.ts";

const { servers, lock, nodesOf } = useZkLockServers("fc-zk-kinds-");

function held(r: Outcome<Hold>): Hold {
  if (r.type !== "ok") throw new Error(`not acquired: ${JSON.stringify(r)}`);
  return r.value;
}

/** Whether a promise is still pending after a moment (a waiter still waiting). */
async function pending(p: Promise<unknown>): Promise<boolean> {
  return Promise.race([p.then(() => false, () => false), sleep(300).then(() => true)]);
}

/**
 * A holder on `key`, and a waiter behind it through a link of its own whose
 * replies come 400 ms late; returned once the waiter's node is on the servers.
 */
async function slowWaiter(kind: string, key: string, n: number, commandTimeoutMs: number, sessionMs: number) {
  const { proxy: p, endpoint } = await servers().linkToZk1(key, 400);
  const holder = lock(kind, `${kind}-holder${n}`), waiter = lock(kind, `${kind}-waiter${n}`, [endpoint], commandTimeoutMs);
  const h = held(await holder.acquire(key, 2000, 0));
  const abort = new AbortController();
  const waiting = waiter.acquire(key, sessionMs, 20_000, { signal: abort.signal });
  await eventually(async () => (await nodesOf(key)).length === 2);
  return { p, holder, h, abort, waiting };
}

describe("zookeeper-rw", () => {
  it("readers hold together; a writer waits for every earlier node, a later reader for the writer; behind names whom each waited for", async () => {
    const key = "rw";
    const [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map((p) => lock("zookeeper-rw", p));
    const r1 = held(await a.acquire(key, 2000, 0, { mode: "read" }));
    const r2 = held(await b.acquire(key, 2000, 0, { mode: "read" }));
    expect(String(r1.extra!.node)).toContain(`_c_${r1.extra!.session}-a-h1-read-`);
    expect(r2.fence!).toBeGreaterThan(r1.fence!);
    // A writer cannot get in while readers hold.
    expect(await c.acquire(key, 2000, 0, { mode: "write" })).toEqual({ type: "fail", error: "busy" });
    const writing = c.acquire(key, 2000, 8000, { mode: "write" });
    await eventually(async () => (await nodesOf(key)).length === 3);
    // A reader that comes after a waiting writer queues behind it, though only readers hold.
    const reading = d.acquire(key, 2000, 8000, { mode: "read" });
    await eventually(async () => (await nodesOf(key)).length === 4);
    expect(await pending(writing)).toBe(true);
    expect(await pending(reading)).toBe(true);
    await a.release(key, r1);
    expect(await pending(writing)).toBe(true);
    await b.release(key, r2);
    const w = held(await writing);
    expect(String(w.extra!.node)).toContain("-write-");
    // It watched the next lower node, the second reader's.
    expect(w.extra!.behind).toBe(r2.owner);
    expect(w.fence!).toBeGreaterThan(r2.fence!);
    // The writer excludes readers.
    expect(await pending(reading)).toBe(true);
    expect(await e.acquire(key, 2000, 0, { mode: "read" })).toMatchObject({ type: "fail", error: "busy" });
    await c.release(key, w);
    const r3 = held(await reading);
    expect(r3.extra!.behind).toBe(w.owner);
    expect(r3.fence!).toBeGreaterThan(w.fence!);
    // A writer that gives up behind the reader says whom it waited behind.
    expect(await e.acquire(key, 2000, 300, { mode: "write" })).toEqual({ type: "fail", error: "timeout", value: { behind: r3.owner } });
    await d.release(key, r3);
    expect(await nodesOf(key)).toEqual([]);
  }, 30_000);
});

describe.each(["zookeeper", "zookeeper-rw"])("%s cancellation", (kind) => {
  it("an aborted wait deletes its node and fails cancelled, naming its owner and the holder it waited behind", async () => {
    const key = `cancel-${kind}`;
    const holder = lock(kind, `${kind}-holder`), waiter = lock(kind, `${kind}-waiter`), next = lock(kind, `${kind}-next`);
    const h = held(await holder.acquire(key, 2000, 0));
    const abort = new AbortController();
    // A session of 4 s: long enough that a loaded machine still finds the dead node queued below.
    const waiting = waiter.acquire(key, 4000, 10_000, { signal: abort.signal });
    await eventually(async () => (await nodesOf(key)).length === 2);
    const began = Date.now();
    abort.abort();
    expect(await waiting).toEqual({ type: "fail", error: "cancelled", value: { owner: `${kind}-waiter-h1`, behind: h.owner } });
    expect(Date.now() - began).toBeLessThan(1000);
    // The servers have the holder's node only.
    expect(await nodesOf(key)).toEqual([h.extra!.node]);
    // Nothing stalls: the next waiter is granted as soon as the holder lets go.
    const after = next.acquire(key, 2000, 5000);
    await eventually(async () => (await nodesOf(key)).length === 2);
    await holder.release(key, h);
    const n = held(await after);
    expect(n.extra!.behind).toBe(h.owner);
    await next.release(key, n);
  }, 30_000);

  it("an abort that comes while the waiter is still reading the queue is heard at once, not after a session timeout", async () => {
    const key = `cancel-early-${kind}`;
    // Every reply to the waiter 400 ms late: its node is on the servers 400 ms
    // before it hears of its create, 800 ms before it has listed the queue, and
    // 1200 ms before it has read the node ahead and begins to wait. An abort 700 ms
    // after the node is seen lands while it lists or reads.
    const { p, holder, h, abort, waiting } = await slowWaiter(kind, key, 3, 3000, 6000);
    await sleep(700);
    const began = Date.now();
    abort.abort();
    expect(await waiting).toEqual({ type: "fail", error: "cancelled", value: { owner: `${kind}-waiter3-h1`, behind: h.owner } });
    // The reads in flight and the delete, a few 400 ms replies; the session's timeout is 6 s.
    expect(Date.now() - began).toBeLessThan(4000);
    expect(await nodesOf(key)).toEqual([h.extra!.node]);
    await holder.release(key, h);
    await p.remove();
  }, 30_000);

  it("an abort that comes just after a read failed on a cut link is still a cancel: cancel-unknown, not the read's error", async () => {
    const key = `cancel-cut-${kind}`;
    // Replies 400 ms late, as above: 600 ms after its node is seen the waiter is
    // listing the queue or reading the node ahead. The link is then cut, that read
    // fails at once, and the waiter is leaving the queue (its delete unanswered)
    // when the abort comes.
    const { p, holder, h, abort, waiting } = await slowWaiter(kind, key, 4, 1000, 4000);
    await sleep(600);
    await p.update({ enabled: false } as never);
    await sleep(200);
    abort.abort();
    const err = await waiting.then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownOutcome);
    expect((err as UnknownOutcome).error).toBe("cancel-unknown");
    // Its session ends on the servers (4 s) and its node with it.
    await eventually(async () => (await nodesOf(key)).length === 1, 15_000);
    await holder.release(key, h);
    await p.remove();
  }, 30_000);

  it("a cancel whose delete gets no answer is unknown, and its node stalls the queue until its session ends", async () => {
    const key = `cancel-lost-${kind}`;
    const { proxy: p, endpoint } = await servers().linkToZk1(`cancel-lost-${kind}`);
    const holder = lock(kind, `${kind}-holder2`), waiter = lock(kind, `${kind}-waiter2`, [endpoint], 1000), next = lock(kind, `${kind}-next2`);
    const h = held(await holder.acquire(key, 2000, 0));
    const abort = new AbortController();
    // A session of 4 s: long enough that a loaded machine still finds the dead node queued below.
    const waiting = waiter.acquire(key, 4000, 10_000, { signal: abort.signal });
    await eventually(async () => (await nodesOf(key)).length === 2);
    await p.update({ enabled: false } as never);
    abort.abort();
    const err = await waiting.then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownOutcome);
    expect((err as UnknownOutcome).error).toBe("cancel-unknown");
    // Its node is still queued: the next waiter waits behind it after the holder leaves, and says so.
    await holder.release(key, h);
    expect(await next.acquire(key, 2000, 300)).toEqual({ type: "fail", error: "timeout", value: { behind: `${kind}-waiter2-h1` } });
    // Until the server ends its session (4 s, the --ttl it asked for).
    const n = held(await next.acquire(key, 2000, 10_000));
    expect(n.extra!.behind).toBe(`${kind}-waiter2-h1`);
    await next.release(key, n);
    await p.remove();
  }, 30_000);
});
