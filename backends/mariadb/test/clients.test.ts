// The MariaDB lock clients against a real server made as a run makes it, and the
// server itself: killed and started again on its data, it keeps the lease rows'
// fences and forgets every named lock.
import { describe, it, expect, beforeAll } from "vitest";
import { existsSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { rng, sleep } from "../../../lib/index.ts";
import type { ClientOptions, Hold, LockClient, MakeClient, Outcome } from "../../../clients/index.ts";
import { CLIENTS } from "../../index.ts";
import { useMariadbServer } from "./server.ts";
import { mysqlUser } from "../server.ts";

/** Each client kind's maker, its module loaded once for the file (clients are made synchronously below). */
const made: Record<string, MakeClient> = {};
beforeAll(async () => {
  for (const name of ["mariadb-lease", "mariadb-get-lock", "mariadb-get-lock-pool"]) made[name] = await CLIENTS[name].load();
});

const clients: LockClient[] = [];
const server = useMariadbServer(() => Promise.all(clients.map((c) => c.close())));
type Kind = "mariadb-lease" | "mariadb-get-lock" | "mariadb-get-lock-pool";
const lock = (kind: Kind, prefix: string, options: ClientOptions = {}): LockClient => {
  const c = made[kind]({ endpoints: [{ ...server.node() }], ownerPrefix: prefix, commandTimeoutMs: 2000, rng: rng(7, prefix), options });
  clients.push(c);
  return c;
};

function held(r: Outcome<Hold>): Hold {
  if (r.type !== "ok") throw new Error(`not acquired: ${JSON.stringify(r)}`);
  return r.value;
}

describe.each(["mariadb-lease", "mariadb-get-lock"] as const)("%s", (kind) => {
  it("grants one holder at a time, with fences one apart in grant order", async () => {
    const a = lock(kind, `${kind}-a`), b = lock(kind, `${kind}-b`);
    const h1 = held(await a.acquire(`${kind}-k1`, 5000, 0));
    expect(await b.acquire(`${kind}-k1`, 5000, 0)).toEqual({ type: "fail", error: "busy" });
    expect(await b.acquire(`${kind}-k1`, 5000, 200)).toEqual({ type: "fail", error: "timeout" });
    expect(await a.release(`${kind}-k1`, h1)).toEqual({ type: "ok", value: { released: true } });
    const h2 = held(await b.acquire(`${kind}-k1`, 5000, 0));
    expect(h2.fence).toBe(h1.fence! + 1);
    expect(await b.renew(`${kind}-k1`, h2, 5000)).toEqual({ type: "ok", value: { ttlMs: 5000 } });
    expect(await b.release(`${kind}-k1`, h2)).toEqual({ type: "ok", value: { released: true } });
    // Released twice: the second finds nothing of its own.
    expect(await b.release(`${kind}-k1`, h2)).toEqual({ type: "ok", value: { released: false } });
  });

  it("hands the lock over to a waiter when the holder releases", async () => {
    const a = lock(kind, `${kind}-c`), b = lock(kind, `${kind}-d`);
    const h1 = held(await a.acquire(`${kind}-k2`, 5000, 0));
    const waiting = b.acquire(`${kind}-k2`, 5000, 3000);
    await sleep(300);
    await a.release(`${kind}-k2`, h1);
    expect(held(await waiting).fence).toBe(h1.fence! + 1);
  });
});

describe("mariadb-lease", () => {
  it("expires by the server's clock; the late holder can neither renew nor release, and the fence moved", async () => {
    const a = lock("mariadb-lease", "e"), b = lock("mariadb-lease", "f");
    const h1 = held(await a.acquire("k3", 300, 0));
    await sleep(500);
    const h2 = held(await b.acquire("k3", 5000, 0));
    expect(h2.fence).toBe(h1.fence! + 1);
    expect(await a.renew("k3", h1, 5000)).toEqual({ type: "fail", error: "not-owner" });
    expect(await a.release("k3", h1)).toEqual({ type: "ok", value: { released: false } });
    expect(await server.sql("SELECT owner, fence FROM fencecheck_leases WHERE name = 'k3'")).toEqual([{ owner: h2.owner, fence: String(h2.fence) }]);
  });
});

describe("mariadb-get-lock", () => {
  it("a holder silent past wait_timeout (--ttl in whole seconds) loses its session, and with it the lock", async () => {
    const a = lock("mariadb-get-lock", "g"), b = lock("mariadb-get-lock", "h");
    const h1 = held(await a.acquire("k4", 1000, 0));
    expect(await b.acquire("k4", 1000, 0)).toEqual({ type: "fail", error: "busy" });
    const waited = Date.now();
    const h2 = held(await b.acquire("k4", 1000, 3000));
    expect(h2.fence).toBe(h1.fence! + 1);
    expect(Date.now() - waited).toBeLessThan(2000);
    await sleep(100);
    // Its session is gone: nothing is sent for it.
    expect(await a.renew("k4", h1, 1000)).toEqual({ type: "fail", error: "not-owner" });
    expect(await a.release("k4", h1)).toEqual({ type: "ok", value: { released: false, lost: "session-ended" } });
    await b.release("k4", h2);
  });

  it("records each grant with its owner and connection in the same statement as the fence", async () => {
    const a = lock("mariadb-get-lock", "i");
    const h = held(await a.acquire("k5", 5000, 0));
    const [row] = await server.sql<{ owner: string; fence: string; connection_id: string }>("SELECT owner, fence, connection_id FROM fencecheck_named WHERE name = 'k5'");
    expect(row).toEqual({ owner: h.owner, fence: String(h.fence), connection_id: String(h.extra!.connection_id) });
    await a.release("k5", h);
  });

  it("re-enters on the holder's session: the same owner and fence, one release per entry, and none once the session is gone", async () => {
    const a = lock("mariadb-get-lock", "j"), b = lock("mariadb-get-lock", "k");
    const outer = held(await a.acquire("k6", 5000, 0));
    const inner = held(await a.acquire("k6", 5000, 0, { reenter: outer }));
    expect(inner).toEqual(outer);
    expect(await b.acquire("k6", 5000, 0)).toEqual({ type: "fail", error: "busy" });
    expect(await a.release("k6", inner)).toEqual({ type: "ok", value: { released: true } });
    // Still held: the outer entry remains.
    expect(await b.acquire("k6", 5000, 0)).toEqual({ type: "fail", error: "busy" });
    expect(await a.release("k6", outer)).toEqual({ type: "ok", value: { released: true } });
    const next = held(await b.acquire("k6", 1000, 0));
    expect(next.fence).toBe(outer.fence! + 1);
    // A re-entry of a hold that is no longer its session's is refused, and takes nothing.
    expect(await a.acquire("k6", 5000, 0, { reenter: outer })).toEqual({ type: "fail", error: "not-owner" });
    expect(await b.acquire("k6", 5000, 0, { reenter: outer })).toEqual({ type: "fail", error: "not-owner" });
    await b.release("k6", next);
  });

  it("names are the keys, compared byte for byte (measured, whatever MariaDB's documentation says); a long key's is its hash", async () => {
    const a = lock("mariadb-get-lock", "l"), b = lock("mariadb-get-lock", "m");
    const upper = held(await a.acquire("Case-K", 5000, 0));
    const lower = held(await b.acquire("case-k", 5000, 0));
    const long = "x".repeat(300);
    const h = held(await b.acquire(long, 5000, 0));
    expect(h.extra!.lock_name).toMatch(/^[0-9a-f]{64}$/);
    expect(await a.acquire(long, 5000, 0)).toEqual({ type: "fail", error: "busy" });
    for (const [c, key, hold] of [[a, "Case-K", upper], [b, "case-k", lower], [b, long, h]] as const) await c.release(key, hold);
  });
});

describe("mariadb-get-lock-pool (kept on purpose)", () => {
  it("clients sharing a worker's pool: the second is handed the holder's connection and re-enters the lock at once", async () => {
    const a = lock("mariadb-get-lock-pool", "n", { sharedConnection: true }), b = lock("mariadb-get-lock-pool", "o", { sharedConnection: true });
    const grantedOn = async () => (await server.sql<{ c: string }>("SELECT connection_id AS c FROM fencecheck_named WHERE name = 'k7'"))[0].c;
    const h1 = held(await a.acquire("k7", 5000, 0));
    const first = await grantedOn();
    const h2 = held(await b.acquire("k7", 5000, 0));
    expect(h2.fence).toBe(h1.fence! + 1);
    // Both grants on one pooled connection, the one that holds the lock.
    expect(await grantedOn()).toBe(first);
    expect(await a.release("k7", h1)).toEqual({ type: "ok", value: { released: true } });
    expect(await b.release("k7", h2)).toEqual({ type: "ok", value: { released: true } });
  });

  it("each client its own pool: the second waits, as with a session each", async () => {
    const a = lock("mariadb-get-lock-pool", "p"), b = lock("mariadb-get-lock-pool", "q");
    const h1 = held(await a.acquire("k8", 5000, 0));
    expect(await b.acquire("k8", 5000, 0)).toEqual({ type: "fail", error: "busy" });
    await a.release("k8", h1);
    held(await b.acquire("k8", 5000, 0));
  });
});

describe("the server", () => {
  it("runs as the mysql user on its own port, its files in the run's data directory (socket and pid file inside)", () => {
    const dir = join(server.dir(), "data", "mariadb-1");
    const real = existsSync(dir) && statSync(dir).isDirectory() ? dir : readlinkSync(dir);
    expect(statSync(real).uid).toBe(mysqlUser().uid);
    expect(existsSync(join(real, "mariadbd.sock"))).toBe(true);
    expect(existsSync(join(real, "mariadbd.pid"))).toBe(true);
    expect(server.node().port).not.toBe(3306);
  });

  it("killed and started again on its data: the lease rows' fences go on, every named lock is gone", async () => {
    const a = lock("mariadb-lease", "r"), b = lock("mariadb-get-lock", "s"), c = lock("mariadb-get-lock", "t");
    const before = held(await a.acquire("k9", 200, 0));
    held(await b.acquire("k10", 5000, 0));
    await server.cluster().kill!("mariadb-1");
    expect(server.cluster().running("mariadb-1")).toBe(false);
    await server.cluster().restart!("mariadb-1");
    await sleep(300);
    expect(held(await a.acquire("k9", 5000, 1000)).fence).toBe(before.fence! + 1);
    // b's session died with the server: c is granted at once.
    held(await c.acquire("k10", 5000, 0));
  });
});
