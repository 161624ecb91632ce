// The renew watchdog and the one place exceptions become `info`, on a real Redis.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Redis } from "ioredis";
import { ProcessGroup } from "../../cluster/processes.ts";
import { PortPlan } from "../../cluster/ports.ts";
import { startRedisNodes } from "../../backends/redis/server.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { RedisLock } from "../../backends/redis/client.ts";
import { LogicalClient } from "../../workloads/client.ts";
import { acquire, certainlyHeld, release, stillHeld } from "../../workloads/hold.ts";
import { MUTEX, type WorkloadOptions } from "../../workloads/options.ts";
import type { UnindexedEvent } from "../../store/events.ts";
import { rng } from "../../lib/index.ts";
import { tempRunDir } from "../helpers.ts";

let group: ProcessGroup;
let node: ServerNode;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const opts = (o: Partial<WorkloadOptions>): WorkloadOptions => ({
  ttlMs: 300, acquireTimeoutMs: 0, workMs: 0, pauseMs: 0, pauseClients: "all", writesPerHold: 1, keys: 1, rate: 1, staggerMs: 0, renew: true, pauseAt: "acquire", fenceReads: false, lock: MUTEX, cancelRate: 0, ...o,
});

beforeAll(async () => {
  const dir = tempRunDir();
  group = new ProcessGroup(dir);
  [node] = await startRedisNodes(group, new PortPlan(0), 1, { runDir: dir });
});
afterAll(() => group.stopAll());

function client() {
  const events: UnindexedEvent[] = [];
  const c = new LogicalClient(0, 4, () => Number(process.hrtime.bigint()), (e) => events.push(e));
  // A generous command timeout: a renew that merely waits on a busy machine must not
  // count as lost.
  const lock = new RedisLock({ endpoint: node, ownerPrefix: `w${Math.random()}`, commandTimeoutMs: 2000, rng: rng(1) });
  return { c, lock, events };
}

describe("renew watchdog", () => {
  it("keeps a lease alive past its TTL, recording each renew, and stops at release", async () => {
    const { c, lock, events } = client();
    await sleep(50);
    // A 1200 ms lease renewed every 400 ms, kept for 2.5 leases: one renew may be
    // 800 ms late without losing it.
    const held = await acquire(c, lock, "wd1", opts({ ttlMs: 1200 }));
    expect(held).not.toBeNull();
    await sleep(3000);
    const other = new RedisLock({ endpoint: node, ownerPrefix: "x", commandTimeoutMs: 2000, rng: rng(2) });
    expect((await other.acquire("wd1", 1200, 0)).type).toBe("fail");
    expect(stillHeld(c, held!)).toBe(true);
    await release(c, lock, held!);
    const renews = events.filter((e) => e.f === "renew" && e.type === "ok");
    expect(renews.length).toBeGreaterThanOrEqual(4);
    const n = events.length;
    await sleep(1000); // two and a half renew intervals
    expect(events.length).toBe(n); // nothing after release
    await lock.close();
    await other.close();
  });

  it("says so when a renew fails, and the hold is no longer used", async () => {
    const { c, lock, events } = client();
    await sleep(50);
    const held = await acquire(c, lock, "wd2", opts({}));
    const r = new Redis({ host: node.host, port: node.port });
    await r.del("wd2"); // the lease is gone, as after an expiry
    r.disconnect();
    for (const end = Date.now() + 5000; !held!.watchdog!.lost && Date.now() < end; ) await sleep(20);
    expect(held!.watchdog!.lost).toBe(true);
    expect(stillHeld(c, held!)).toBe(false);
    expect(events.find((e) => e.f === "renew" && e.type === "fail")).toMatchObject({ error: "not-owner" });
    await release(c, lock, held!);
    await lock.close();
  });
});

describe("what the history proves of a hold", () => {
  it("a hold is certainly held until its acquire's invoke plus the TTL, each renew answered ok moves that on, and a re-entry is asked for only before it", async () => {
    const { c, lock, events } = client();
    // No watchdog: nothing after the acquire shows the lease still stands.
    const bare = await acquire(c, lock, "cert1", opts({ ttlMs: 300, renew: false }));
    expect(bare).not.toBeNull();
    expect(certainlyHeld(c, bare!)).toBe(true);
    await sleep(400);
    expect(stillHeld(c, bare!)).toBe(true);
    expect(certainlyHeld(c, bare!)).toBe(false);
    // A re-entry past that moment is not asked for: no invoke is recorded, and no lock call made.
    const n = events.length;
    const inner = await acquire(c, lock, "cert1", opts({ ttlMs: 300, renew: false }), { request: { reenter: bare!.hold }, fields: { depth: 2 }, outer: bare! });
    expect(inner).toBeNull();
    expect(events.length).toBe(n);
    await release(c, lock, bare!);

    // Renewed every 100 ms: still certainly held three leases later.
    const renewed = await acquire(c, lock, "cert2", opts({ ttlMs: 300 }));
    await sleep(900);
    expect(certainlyHeld(c, renewed!)).toBe(true);
    const lastRenew = events.filter((e) => e.f === "renew" && e.type === "invoke").at(-1)!;
    expect(renewed!.certainUntil).toBe(lastRenew.time + 300e6);
    await release(c, lock, renewed!);
    await lock.close();
  });
});

describe("operations", () => {
  it("a thrown error becomes info, and the client carries on as a new process", async () => {
    const events: UnindexedEvent[] = [];
    const c = new LogicalClient(2, 4, () => 0, (e) => events.push(e));
    const done = await c.op("write", "k", {}, async () => {
      throw Object.assign(new Error("socket hang up"), { code: "timeout" });
    });
    expect(done).toEqual({ type: "info", error: "timeout", invoked: 0 });
    expect(c.process).toBe(6);
    await c.op("read", "k", {}, async () => ({ type: "ok" }));
    expect(events.map((e) => [e.process, e.type])).toEqual([[2, "invoke"], [2, "info"], [6, "invoke"], [6, "ok"]]);
  });

  it("a request that certainly never left completes as fail, and the process goes on", async () => {
    const events: UnindexedEvent[] = [];
    const c = new LogicalClient(1, 4, () => 0, (e) => events.push(e));
    const done = await c.op("write", "k", {}, async () => {
      throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    });
    expect(done).toEqual({ type: "fail", error: "conn-refused", invoked: 0 });
    expect(c.process).toBe(1);
  });

  it("serialises operations of one client: one outstanding at a time", async () => {
    const events: UnindexedEvent[] = [];
    const c = new LogicalClient(0, 1, () => events.length, (e) => events.push(e));
    await Promise.all([
      c.op("write", "k", {}, async () => (await sleep(30), { type: "ok" })),
      c.op("renew", "k", {}, async () => ({ type: "ok" })),
    ]);
    expect(events.map((e) => `${e.f}:${e.type}`)).toEqual(["write:invoke", "write:ok", "renew:invoke", "renew:ok"]);
  });
});
