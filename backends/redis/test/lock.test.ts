// The Redis lock client against a real redis-server.
import { describe, it, expect } from "vitest";
import { Redis } from "ioredis";
import { RedisLock, fenceKey } from "../client.ts";
import { rng, sleep } from "../../../lib/index.ts";
import { useRedisServer } from "./server.ts";

const clients: RedisLock[] = [];
const server = useRedisServer(() => Promise.all(clients.map((c) => c.close())));
const lock = (prefix: string, unsafeRelease = false): RedisLock => {
  const c = new RedisLock({ endpoint: server(), ownerPrefix: prefix, commandTimeoutMs: 1000, rng: rng(7, prefix), unsafeRelease });
  clients.push(c);
  return c;
};

describe("redis lock client", () => {
  it("grants one holder at a time with increasing fences and unique owners", async () => {
    const a = lock("a"), b = lock("b");
    const h1 = await a.acquire("k1", 5000, 0);
    expect(h1.type).toBe("ok");
    expect(await b.acquire("k1", 5000, 0)).toEqual({ type: "fail", error: "busy" });
    expect(await b.acquire("k1", 5000, 100)).toEqual({ type: "fail", error: "timeout" });
    if (h1.type !== "ok") return;
    expect((await a.release("k1", h1.value)).type).toBe("ok");
    const h2 = await b.acquire("k1", 5000, 0);
    const h3 = await a.acquire("k1b", 5000, 0);
    expect(h2.type === "ok" && h2.value.fence! > h1.value.fence!).toBe(true);
    expect(h2.type === "ok" && h3.type === "ok" && h2.value.owner !== h3.value.owner && h1.value.owner !== h3.value.owner).toBe(true);
  });

  it("moves the fence counter only when the lock is granted", async () => {
    const a = lock("c"), b = lock("d");
    const h = await a.acquire("k2", 5000, 0);
    const r = new Redis({ host: server().host, port: server().port });
    const before = await r.get(fenceKey("k2"));
    await b.acquire("k2", 5000, 0);
    await b.acquire("k2", 5000, 0);
    expect(await r.get(fenceKey("k2"))).toBe(before);
    r.disconnect();
    expect(h.type).toBe("ok");
  });

  it("renews only its own lease, and a lease expires without renewal", async () => {
    const a = lock("e"), b = lock("f");
    // Renewals 400 ms apart on a 1200 ms lease: a busy machine may stall one by
    // 800 ms without losing it, yet the four of them outlast the first lease.
    const h = await a.acquire("k3", 1200, 0);
    if (h.type !== "ok") throw new Error("no hold");
    for (let i = 0; i < 4; i++) {
      await sleep(400);
      expect(await a.renew("k3", h.value, 1200)).toEqual({ type: "ok", value: { ttlMs: 1200 } });
    }
    expect((await b.acquire("k3", 1200, 0)).type).toBe("fail");
    // Left alone, the lease runs out: b gets in by itself, retrying.
    const hb = await b.acquire("k3", 1200, 5000);
    expect(hb.type).toBe("ok");
    expect(await a.renew("k3", h.value, 1200)).toEqual({ type: "fail", error: "not-owner" });
  });

  it("safe release never deletes the next holder's lock", async () => {
    const a = lock("g"), b = lock("h");
    const ha = await a.acquire("k4", 200, 0);
    await sleep(300);
    const hb = await b.acquire("k4", 5000, 0);
    if (ha.type !== "ok" || hb.type !== "ok") throw new Error("no hold");
    expect(await a.release("k4", ha.value)).toEqual({ type: "ok", value: { released: false } });
    expect((await lock("i").acquire("k4", 5000, 0)).type).toBe("fail");
  });

  it("GET-then-DEL release deletes the next holder's lock when the lease expires in between (T1)", async () => {
    const a = new RedisLock({ endpoint: server(), ownerPrefix: "j", commandTimeoutMs: 1000, rng: rng(1), unsafeRelease: true, releaseGapMs: 3000 });
    clients.push(a);
    const b = lock("k"), c = lock("l");
    const ha = await a.acquire("k5", 1200, 0);
    if (ha.type !== "ok") throw new Error("no hold");
    // a's GET sees its own owner at once (well within the 1200 ms lease); its DEL
    // comes 3 s later, after the lease expired and b, retrying, took the lock. b's
    // own lease is long so that only a's DEL can free it for c.
    const releasing = a.release("k5", ha.value);
    const hb = await b.acquire("k5", 60_000, 2500);
    expect(hb.type).toBe("ok");
    expect(await releasing).toEqual({ type: "ok", value: { released: true } });
    // b still believes it holds k5, yet c gets it: two holders.
    expect((await c.acquire("k5", 5000, 0)).type).toBe("ok");
  });

  it("compare-and-delete release does not fall for the same gap", async () => {
    const a = lock("m"), b = lock("n"), c = lock("o");
    const ha = await a.acquire("k6", 200, 0);
    if (ha.type !== "ok") throw new Error("no hold");
    await sleep(250);
    expect((await b.acquire("k6", 5000, 0)).type).toBe("ok");
    expect(await a.release("k6", ha.value)).toEqual({ type: "ok", value: { released: false } });
    expect((await c.acquire("k6", 5000, 0)).type).toBe("fail");
  });
});
