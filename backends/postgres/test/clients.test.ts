// The Postgres lock clients against a real server made as a run makes it.
import { describe, it, expect, beforeAll } from "vitest";
import { rng, sleep } from "../../../lib/index.ts";
import type { LockClient } from "../../../clients/index.ts";
import { type MakeClient } from "../../../clients/index.ts";
import { CLIENTS } from "../../index.ts";
import { usePostgresServer } from "./server.ts";

/** Each client kind's maker, its module loaded once for the file (clients are made synchronously below). */
const made: Record<string, MakeClient> = {};
beforeAll(async () => {
  for (const [name, kind] of Object.entries(CLIENTS)) made[name] = await kind.load();
});

const clients: LockClient[] = [];
const server = usePostgresServer(() => Promise.all(clients.map((c) => c.close())));
const lock = (kind: "postgres-lease" | "postgres-advisory", prefix: string): LockClient => {
  const endpoint = { ...server.node() };
  const c = made[kind]({ endpoints: [endpoint], ownerPrefix: prefix, commandTimeoutMs: 2000, rng: rng(7, prefix), options: {} });
  clients.push(c);
  return c;
};

const sql = server.sql;

describe.each(["postgres-lease", "postgres-advisory"] as const)("%s", (kind) => {
  it("grants one holder at a time, with fences one apart in grant order", async () => {
    const a = lock(kind, `${kind}-a`), b = lock(kind, `${kind}-b`);
    const h1 = await a.acquire(`${kind}-k1`, 5000, 0);
    if (h1.type !== "ok") throw new Error("no hold");
    expect(await b.acquire(`${kind}-k1`, 5000, 0)).toEqual({ type: "fail", error: "busy" });
    expect(await b.acquire(`${kind}-k1`, 5000, 200)).toEqual({ type: "fail", error: "timeout" });
    expect(await a.release(`${kind}-k1`, h1.value)).toEqual({ type: "ok", value: { released: true } });
    const h2 = await b.acquire(`${kind}-k1`, 5000, 0);
    if (h2.type !== "ok") throw new Error("no second hold");
    expect(h2.value.fence).toBe(h1.value.fence! + 1);
    expect(h2.value.owner).not.toBe(h1.value.owner);
    expect(await b.renew(`${kind}-k1`, h2.value, 5000)).toEqual({ type: "ok", value: { ttlMs: 5000 } });
    expect(await b.release(`${kind}-k1`, h2.value)).toEqual({ type: "ok", value: { released: true } });
    // Released twice: the second finds nothing of its own.
    expect(await b.release(`${kind}-k1`, h2.value)).toEqual({ type: "ok", value: { released: false } });
  });

  it("hands the lock over to a waiter when the holder releases", async () => {
    const a = lock(kind, `${kind}-c`), b = lock(kind, `${kind}-d`);
    const h1 = await a.acquire(`${kind}-k2`, 5000, 0);
    if (h1.type !== "ok") throw new Error("no hold");
    const waiting = b.acquire(`${kind}-k2`, 5000, 3000);
    await sleep(300);
    await a.release(`${kind}-k2`, h1.value);
    const h2 = await waiting;
    expect(h2.type === "ok" && h2.value.fence).toBe(h1.value.fence! + 1);
  });
});

describe("postgres-lease", () => {
  it("expires by the server's clock; the late holder can neither renew nor release, and the fence moved", async () => {
    const a = lock("postgres-lease", "e"), b = lock("postgres-lease", "f");
    const h1 = await a.acquire("k3", 300, 0);
    if (h1.type !== "ok") throw new Error("no hold");
    await sleep(500);
    const h2 = await b.acquire("k3", 5000, 0);
    expect(h2.type === "ok" && h2.value.fence).toBe(h1.value.fence! + 1);
    expect(await a.renew("k3", h1.value, 5000)).toEqual({ type: "fail", error: "not-owner" });
    expect(await a.release("k3", h1.value)).toEqual({ type: "ok", value: { released: false } });
    const [row] = await sql<{ owner: string }>("SELECT owner FROM fencecheck_leases WHERE name = 'k3'");
    expect(h2.type === "ok" && row.owner).toBe(h2.type === "ok" && h2.value.owner);
  });
});

describe("postgres-advisory", () => {
  it("a holder silent for --ttl loses its session (idle_session_timeout), and with it the lock", async () => {
    const a = lock("postgres-advisory", "g"), b = lock("postgres-advisory", "h");
    const h1 = await a.acquire("k4", 400, 0);
    if (h1.type !== "ok") throw new Error("no hold");
    // Not yet: the holder's session is alive.
    expect(await b.acquire("k4", 400, 0)).toEqual({ type: "fail", error: "busy" });
    const waited = Date.now();
    const h2 = await b.acquire("k4", 400, 3000);
    expect(h2.type === "ok" && h2.value.fence).toBe(h1.value.fence! + 1);
    expect(Date.now() - waited).toBeLessThan(2500);
    // The server told the old holder's client why: it knows its lock is gone.
    await sleep(100);
    expect(await a.renew("k4", h1.value, 400)).toEqual({ type: "fail", error: "not-owner" });
    expect(await a.release("k4", h1.value)).toEqual({ type: "ok", value: { released: false } });
  });

  it("records each grant with its owner in the same statement as the fence", async () => {
    const a = lock("postgres-advisory", "i");
    const h = await a.acquire("k5", 5000, 0);
    if (h.type !== "ok") throw new Error("no hold");
    const [row] = await sql<{ owner: string; fence: string }>("SELECT owner, fence FROM fencecheck_advisory WHERE name = 'k5'");
    expect(row).toEqual({ owner: h.value.owner, fence: String(h.value.fence) });
    await a.release("k5", h.value);
  });
});
