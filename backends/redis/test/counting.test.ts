// The Redis semaphores against a real redis-server: redis-semaphore's Semaphore and
// MultiSemaphore (through the registry, fences from --fence-source single as a run
// takes them) and the read-then-write semaphore kept on purpose. A semaphore of 2
// admits 2 and the third waits; an aborted wait fails cancelled and leaves nothing
// on the server; the racy one lets two clients take the last permit.
import { describe, it, expect, vi } from "vitest";
import { CANCELLED } from "../../../clients/index.ts";
import { CLIENTS } from "../../index.ts";
import { fenceKey } from "../client.ts";
import { held, redisKindsServer } from "./kinds-clients.ts";

const { client, server } = redisKindsServer();
const single = { fenceSource: "single" } as const;

describe.each([
  ["redis-semaphore-counting", (owner: string) => [owner]],
  ["redis-multi-semaphore", (owner: string) => [`${owner}_0`]],
] as const)("%s", (name, entriesOf) => {
  const key = `${name}-k`;
  // The library's key for it (its README: "final key in redis: semaphore:<key>").
  const zset = `semaphore:${key}`;

  it("a semaphore of 2 admits 2, the third waits until a permit is released", async () => {
    const [a, b, c] = [await client(name, `${name}-a`, single), await client(name, `${name}-b`, single), await client(name, `${name}-c`, single)];
    const ha = held(await a.acquire(key, 5000, 0, { permits: 2 }));
    const hb = held(await b.acquire(key, 5000, 0, { permits: 2 }));
    expect(hb.fence).toBe(ha.fence! + 1);
    expect((await server().zrange(zset, 0, "-1")).sort()).toEqual([...entriesOf(ha.owner), ...entriesOf(hb.owner)].sort());
    expect(await c.acquire(key, 5000, 100, { permits: 2 })).toEqual({ type: "fail", error: "timeout" });
    const waiting = c.acquire(key, 5000, 3000, { permits: 2 });
    expect(await a.release(key, ha)).toEqual({ type: "ok", value: { released: true } });
    const hc = held(await waiting);
    expect((await server().zrange(zset, 0, "-1")).sort()).toEqual([...entriesOf(hb.owner), ...entriesOf(hc.owner)].sort());
    await b.release(key, hb);
    await c.release(key, hc);
    expect(CLIENTS[name].kinds).toEqual({ semaphore: true, cancel: true });
  });

  it("an aborted wait fails cancelled at once and leaves no entry of the waiter", async () => {
    const [a, b] = [await client(name, `${name}-d`), await client(name, `${name}-e`)];
    const ha = held(await a.acquire(`${key}2`, 5000, 0, { permits: 1 }));
    const ac = new AbortController();
    const started = Date.now();
    const waiting = b.acquire(`${key}2`, 5000, 5000, { permits: 1, signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    expect(await waiting).toEqual({ type: "fail", error: CANCELLED });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await server().zrange(`${zset}2`, 0, "-1")).toEqual(entriesOf(ha.owner));
  });

  it("a try in flight when the signal fires keeps its grant: ok, the permit really taken", async () => {
    const a = await client(name, `${name}-f`);
    held(await a.acquire(`${key}3-warm`, 5000, 0)); // connected, so the next try is sent before the abort below runs
    const ac = new AbortController();
    const acquiring = a.acquire(`${key}3`, 5000, 5000, { permits: 2, signal: ac.signal });
    ac.abort();
    const hold = held(await acquiring);
    expect(await server().zrange(`${zset}3`, 0, "-1")).toEqual(entriesOf(hold.owner));
  });
});

describe("redis-semaphore (its Mutex)", () => {
  it("a try (a wait of 0) makes its one attempt even when the clock moves on between the library's reads of it", async () => {
    const a = await client("redis-semaphore", "mt");
    held(await a.acquire("mt-warm", 5000, 0)); // connected: the try below is the library's loop alone
    // Every read of the clock a millisecond later than the last: with an acquireTimeout
    // of 1 ms the library's loop saw its end passed before its first attempt.
    let now = Date.now();
    const clock = vi.spyOn(Date, "now").mockImplementation(() => (now += 1));
    try {
      const hold = held(await a.acquire("mt", 5000, 0));
      expect(await server().get("mutex:mt")).toBe(hold.owner);
    } finally {
      clock.mockRestore();
    }
  });

  it("an aborted wait fails cancelled and leaves the holder's key as it was", async () => {
    const [a, b] = [await client("redis-semaphore", "ma"), await client("redis-semaphore", "mb")];
    const ha = held(await a.acquire("mx", 5000, 0));
    const ac = new AbortController();
    const waiting = b.acquire("mx", 5000, 5000, { signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    expect(await waiting).toEqual({ type: "fail", error: CANCELLED });
    expect(await server().get("mutex:mx")).toBe(ha.owner);
  });
});

describe("redis-semaphore-racy (kept on purpose)", () => {
  it("admits 2 of 2 with fences from one counter, refuses the third, and a release gives a permit back", async () => {
    const [a, b, c] = [await client("redis-semaphore-racy", "xa"), await client("redis-semaphore-racy", "xb"), await client("redis-semaphore-racy", "xc")];
    const ha = held(await a.acquire("rs1", 5000, 0, { permits: 2 }));
    const hb = held(await b.acquire("rs1", 5000, 0, { permits: 2 }));
    expect([ha.fence, hb.fence]).toEqual([1, 2]);
    expect(await c.acquire("rs1", 5000, 0, { permits: 2 })).toEqual({ type: "fail", error: "busy" });
    expect(await a.release("rs1", ha)).toEqual({ type: "ok", value: { released: true } });
    expect(held(await c.acquire("rs1", 5000, 0, { permits: 2 })).fence).toBe(3);
    expect(await server().get("rs1")).toBe("2");
  });

  it("two clients that read the count before either raises it both take the last permit", async () => {
    const [a, b] = [await client("redis-semaphore-racy", "xd"), await client("redis-semaphore-racy", "xe")];
    // Both read 0 of 1 within the 5 ms between a client's GET and its INCR.
    const [ha, hb] = (await Promise.all([a.acquire("rs2", 5000, 0, { permits: 1 }), b.acquire("rs2", 5000, 0, { permits: 1 })])).map(held);
    expect(ha.owner).not.toBe(hb.owner);
    expect(await server().get("rs2")).toBe("2");
    expect(Number(await server().get(fenceKey("rs2")))).toBe(2);
  });

  it("an aborted wait fails cancelled and leaves the count as it was", async () => {
    const [a, b] = [await client("redis-semaphore-racy", "xf"), await client("redis-semaphore-racy", "xg")];
    held(await a.acquire("rs3", 5000, 0, { permits: 1 }));
    const ac = new AbortController();
    const waiting = b.acquire("rs3", 5000, 5000, { permits: 1, signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    expect(await waiting).toEqual({ type: "fail", error: CANCELLED });
    expect(await server().get("rs3")).toBe("1");
  });
});
