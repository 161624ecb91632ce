// simple-redis-mutex 3.0.0 as its README uses it, against a real redis-server:
// what its functions do not say (a failed lock, a refresh, a release) is read
// from the commands it sent. Its whole runs under pauses are library tests
// (simple-redis-mutex.library.test.ts, `npm run test:libraries`).
import { describe, it, expect, beforeAll } from "vitest";
import { type Hold, type LockClient, type Outcome, type MakeClient } from "../../../clients/index.ts";
import { CLIENTS } from "../../index.ts";
import { rng, sleep } from "../../../lib/index.ts";
import { useRedisServer } from "./server.ts";

/** Each client kind's maker, its module loaded once for the file (clients are made synchronously below). */
const made: Record<string, MakeClient> = {};
beforeAll(async () => {
  for (const [name, kind] of Object.entries(CLIENTS)) made[name] = await kind.load();
});

const clients: LockClient[] = [];
const server = useRedisServer(() => Promise.all(clients.map((c) => c.close())));
const make = (prefix: string): LockClient => {
  const { host, port } = server();
  const c = made["simple-redis-mutex"]({ endpoints: [{ name: "redis-1", host, port }], ownerPrefix: prefix, commandTimeoutMs: 1000, rng: rng(5, prefix), options: {} });
  clients.push(c);
  return c;
};
const held = (o: Outcome<Hold>): Hold => {
  if (o.type !== "ok") throw new Error(`expected a hold, got ${JSON.stringify(o)}`);
  return o.value;
};
describe("simple-redis-mutex against one redis-server", () => {
  it("one holder at a time, its own increasing fences; a refused wait fails, a release releases", async () => {
    const a = make("a"), b = make("b");
    const h1 = held(await a.acquire("k1", 5000, 0));
    expect(typeof h1.fence).toBe("number");
    expect(await b.acquire("k1", 5000, 0)).toEqual({ type: "fail", error: "busy" });
    // lock() with failAfter: every SET it sent was answered nil, so certainly not acquired.
    expect(await b.acquire("k1", 5000, 300)).toEqual({ type: "fail", error: "timeout" });
    expect(await a.renew("k1", h1, 5000)).toEqual({ type: "ok", value: { ttlMs: 5000 } });
    expect(await a.release("k1", h1)).toEqual({ type: "ok", value: { released: true } });
    const h2 = held(await b.acquire("k1", 5000, 0));
    expect(h2.fence!).toBeGreaterThan(h1.fence!);
    expect(h2.owner).not.toBe(h1.owner);
    expect(await b.release("k1", h2)).toEqual({ type: "ok", value: { released: true } });
  });

  it("a waiter is woken by the holder's release (its pub/sub), well before its failAfter", async () => {
    const a = make("c"), b = make("d");
    const h = held(await a.acquire("k2", 5000, 0));
    const waiting = b.acquire("k2", 5000, 3000);
    await sleep(200);
    const released = Date.now();
    await a.release("k2", h);
    const got = held(await waiting);
    expect(Date.now() - released).toBeLessThan(1000);
    expect(got.fence!).toBeGreaterThan(h.fence!);
  });

  it("a lease that ran out: the refresh finds another holder's value, and the late release is an unknown outcome", async () => {
    const a = make("e"), b = make("f");
    const h = held(await a.acquire("k3", 300, 0));
    await sleep(450);
    const hb = held(await b.acquire("k3", 5000, 0));
    expect(await a.renew("k3", h, 300)).toEqual({ type: "fail", error: "not-owner" });
    // Its refresh counted itself released: nothing more is sent, nothing deleted.
    expect(await a.release("k3", h)).toEqual({ type: "ok", value: { released: false } });
    expect(await b.release("k3", hb)).toEqual({ type: "ok", value: { released: true } });

    const h2 = held(await a.acquire("k4", 300, 0));
    await sleep(450);
    // Its script returns nothing, and it ran after our lease may have run out.
    await expect(a.release("k4", h2)).rejects.toMatchObject({ code: "maybe-expired" });
  });
});
