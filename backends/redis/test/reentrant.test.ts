// The reentrant Redis clients (Redisson's RLock layout) against a real redis-server:
// a re-entry keeps its owner and its fence follows the declared rule, the inner
// release does not free the lock and the outer does, and the two defects kept on
// purpose show.
import { describe, it, expect } from "vitest";
import { CANCELLED } from "../../../clients/index.ts";
import { CLIENTS } from "../../index.ts";
import { fenceKey } from "../client.ts";
import { sleep } from "../../../lib/index.ts";
import { held, redisKindsServer } from "./kinds-clients.ts";

const { client, server } = redisKindsServer();

describe("redis-reentrant", () => {
  it("a re-entry keeps the owner and the fence; only the outermost release frees the lock", async () => {
    const a = await client("redis-reentrant", "ra"), b = await client("redis-reentrant", "rb");
    const outer = held(await a.acquire("re1", 5000, 0));
    const inner = held(await a.acquire("re1", 5000, 0, { reenter: outer }));
    const innermost = held(await a.acquire("re1", 5000, 0, { reenter: inner }));
    expect([inner.owner, innermost.owner]).toEqual([outer.owner, outer.owner]);
    expect([inner.fence, innermost.fence]).toEqual([outer.fence, outer.fence]);
    expect(await server().hget("re1", outer.owner)).toBe("3");
    // The counter moved once, on free-to-held.
    expect(Number(await server().get(fenceKey("re1")))).toBe(outer.fence);
    expect(await b.acquire("re1", 5000, 0)).toEqual({ type: "fail", error: "busy" });

    expect(await a.release("re1", innermost)).toEqual({ type: "ok", value: { released: true } });
    expect(await a.release("re1", inner)).toEqual({ type: "ok", value: { released: true } });
    expect(await server().hget("re1", outer.owner)).toBe("1");
    expect(await b.acquire("re1", 5000, 0)).toEqual({ type: "fail", error: "busy" });
    expect(await a.release("re1", outer)).toEqual({ type: "ok", value: { released: true } });
    expect(await server().exists("re1")).toBe(0);
    const next = held(await b.acquire("re1", 5000, 0));
    expect(next.fence).toBe(outer.fence! + 1);
    expect(CLIENTS["redis-reentrant"].kinds).toEqual({ reentrant: { fenceOnReentry: "same" }, cancel: true });
  });

  it("a re-entry refreshes the lease; renew and release of an owner not in the hash fail not-owner", async () => {
    const a = await client("redis-reentrant", "rc"), b = await client("redis-reentrant", "rd");
    const outer = held(await a.acquire("re2", 1000, 0));
    await sleep(400);
    held(await a.acquire("re2", 1000, 0, { reenter: outer }));
    expect(await server().pttl("re2")).toBeGreaterThan(800);
    const other = held(await b.acquire("re3", 5000, 0));
    expect(await a.renew("re3", { ...other, owner: outer.owner }, 5000)).toEqual({ type: "fail", error: "not-owner" });
    expect(await a.release("re3", { ...other, owner: outer.owner })).toEqual({ type: "fail", error: "not-owner" });
    expect(await server().hget("re3", other.owner)).toBe("1");
  });

  it("a re-entry of a hold whose lease ran out fails not-owner at once, free or taken", async () => {
    const a = await client("redis-reentrant", "re"), b = await client("redis-reentrant", "rf");
    const outer = held(await a.acquire("re4", 150, 0));
    await sleep(250);
    expect(await a.acquire("re4", 5000, 5000, { reenter: outer })).toEqual({ type: "fail", error: "not-owner" });
    expect(await server().exists("re4")).toBe(0);
    held(await b.acquire("re4", 5000, 0));
    const started = Date.now();
    expect(await a.acquire("re4", 5000, 5000, { reenter: outer })).toEqual({ type: "fail", error: "not-owner" });
    expect(Date.now() - started).toBeLessThan(500);
  });

  it("an aborted wait fails cancelled at once and leaves nothing of the waiter on the server", async () => {
    const a = await client("redis-reentrant", "rg"), b = await client("redis-reentrant", "rh");
    const hold = held(await a.acquire("re5", 5000, 0));
    const ac = new AbortController();
    const started = Date.now();
    const waiting = b.acquire("re5", 5000, 5000, { signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    expect(await waiting).toEqual({ type: "fail", error: CANCELLED });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(Object.keys(await server().hgetall("re5")).sort()).toEqual(["fence", hold.owner].sort());
    // Already aborted: no try is made, even on a free lock.
    expect(await b.acquire("re5-free", 5000, 5000, { signal: AbortSignal.abort() })).toEqual({ type: "fail", error: CANCELLED });
    expect(await server().exists("re5-free")).toBe(0);
  });

  it("a try in flight when the signal fires keeps its grant: ok, the lock really held", async () => {
    const a = await client("redis-reentrant", "ri");
    held(await a.acquire("re6-warm", 5000, 0)); // connected, so the next try is sent before the abort below runs
    const ac = new AbortController();
    const acquiring = a.acquire("re6", 5000, 5000, { signal: ac.signal });
    ac.abort();
    const hold = held(await acquiring);
    expect(await server().hget("re6", hold.owner)).toBe("1");
  });
});

describe("redis-fenced-reentrant", () => {
  it("every acquire, re-entries included, takes a new, higher fence; the owner stays", async () => {
    const a = await client("redis-fenced-reentrant", "fa");
    const outer = held(await a.acquire("fe1", 5000, 0));
    const inner = held(await a.acquire("fe1", 5000, 0, { reenter: outer }));
    const innermost = held(await a.acquire("fe1", 5000, 0, { reenter: inner }));
    expect([inner.owner, innermost.owner]).toEqual([outer.owner, outer.owner]);
    expect([inner.fence, innermost.fence]).toEqual([outer.fence! + 1, outer.fence! + 2]);
    expect(await server().hget("fe1", "fence")).toBe(String(innermost.fence));
    expect(CLIENTS["redis-fenced-reentrant"].kinds?.reentrant).toEqual({ fenceOnReentry: "new" });
  });
});

describe("defects kept on purpose", () => {
  it("redis-reentrant-unsafe-release: the inner release frees the lock under the outer hold", async () => {
    const a = await client("redis-reentrant-unsafe-release", "ua"), b = await client("redis-reentrant-unsafe-release", "ub");
    const outer = held(await a.acquire("ur1", 5000, 0));
    const inner = held(await a.acquire("ur1", 5000, 0, { reenter: outer }));
    expect(await a.release("ur1", inner)).toEqual({ type: "ok", value: { released: true } });
    // a still holds at depth 1, yet b is granted.
    const other = held(await b.acquire("ur1", 5000, 0));
    expect(other.owner).not.toBe(outer.owner);
    expect(await a.release("ur1", outer)).toEqual({ type: "fail", error: "not-owner" });
  });

  it("redis-reentrant-no-refresh: a re-entry leaves the lease ending where the outer acquire put it", async () => {
    const a = await client("redis-reentrant-no-refresh", "na"), b = await client("redis-reentrant-no-refresh", "nb");
    const outer = held(await a.acquire("nr1", 1000, 0));
    await sleep(400);
    const inner = held(await a.acquire("nr1", 1000, 0, { reenter: outer }));
    const reentered = Date.now();
    expect(inner.ttlMs).toBe(1000);
    expect(await server().pttl("nr1")).toBeLessThan(700);
    // The 1000 ms the re-entry's hold counts on are not there: b gets in before they end.
    held(await b.acquire("nr1", 5000, 2000));
    expect(Date.now() - reentered).toBeLessThan(1000);
  });
});
