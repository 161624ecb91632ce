// postgres-advisory's kinds beyond the mutex, against a real server made as a run
// makes it: shared holds (pg_advisory_lock_shared) let readers hold together and
// keep a writer out; a reader that comes after a waiting writer waits behind it;
// fences move once per grant, readers included; an aborted wait is cancelled at
// the server, which pg_locks shows (no lock, granted or waiting, of that session),
// and one whose link goes silent is unknown, its server process left waiting.
import { describe, it, expect, beforeAll } from "vitest";
import { Toxiproxy } from "toxiproxy-node-client";
import { startProxyServer } from "../../../proxy/index.ts";
import { UnknownOutcome } from "../../../clients/lock.ts";
import { rng, sleep } from "../../../lib/index.ts";
import { type Hold, type LockClient, type MakeClient, type Outcome } from "../../../clients/index.ts";
import { CLIENTS } from "../../index.ts";
import { usePostgresServer } from "./server.ts";
import { advisoryKeys } from "../advisory.ts";

let make: MakeClient;
beforeAll(async () => {
  make = await CLIENTS["postgres-advisory"].load();
});

const clients: LockClient[] = [];
const server = usePostgresServer(() => Promise.all(clients.map((c) => c.close())));
const lock = (prefix: string, endpoint = { ...server.node() }): LockClient => {
  const c = make({ endpoints: [endpoint], ownerPrefix: prefix, commandTimeoutMs: 1000, rng: rng(7, prefix), options: {} });
  clients.push(c);
  return c;
};

function held(r: Outcome<Hold>): Hold {
  if (r.type !== "ok") throw new Error(`not acquired: ${JSON.stringify(r)}`);
  return r.value;
}

const sql = server.sql;

/** The advisory locks of a key as the server has them: each session's mode and whether granted. */
const locksOf = (key: string): Promise<Array<{ pid: number; mode: string; granted: boolean }>> =>
  sql(
    `SELECT pid, mode, granted FROM pg_locks WHERE locktype = 'advisory'
       AND classid = ($1::int4::bigint & 4294967295)::oid AND objid = ($2::int4::bigint & 4294967295)::oid AND objsubid = 2 ORDER BY granted DESC, mode, pid`,
    advisoryKeys(key),
  );

/** Whether a promise is still pending after a moment (a waiter still waiting). */
async function pending(p: Promise<unknown>): Promise<boolean> {
  return Promise.race([p.then(() => false, () => false), sleep(300).then(() => true)]);
}

describe("postgres-advisory rw", () => {
  it("readers hold together and keep a writer out; a reader after a waiting writer waits behind it; every grant moves the fence", async () => {
    const key = "rw";
    const [a, b, c, d] = ["a", "b", "c", "d"].map((p) => lock(p));
    const r1 = held(await a.acquire(key, 5000, 0, { mode: "read" }));
    const r2 = held(await b.acquire(key, 5000, 1000, { mode: "read" }));
    expect(await locksOf(key)).toEqual([
      { pid: r1.extra!.backend_pid, mode: "ShareLock", granted: true },
      { pid: r2.extra!.backend_pid, mode: "ShareLock", granted: true },
    ].sort((x, y) => Number(x.pid) - Number(y.pid)));
    expect(new Set([r1.fence, r2.fence]).size).toBe(2);
    expect(await c.acquire(key, 5000, 0, { mode: "write" })).toEqual({ type: "fail", error: "busy" });
    const writing = c.acquire(key, 5000, 5000, { mode: "write" });
    expect(await pending(writing)).toBe(true);
    // Postgres queues a shared request behind a waiting exclusive one.
    const reading = d.acquire(key, 5000, 5000, { mode: "read" });
    expect(await pending(reading)).toBe(true);
    await a.release(key, r1);
    expect(await pending(writing)).toBe(true);
    expect(await b.release(key, r2)).toEqual({ type: "ok", value: { released: true } });
    const w = held(await writing);
    expect(w.fence!).toBeGreaterThan(Math.max(r1.fence!, r2.fence!));
    expect(await pending(reading)).toBe(true);
    expect(await c.release(key, w)).toEqual({ type: "ok", value: { released: true } });
    const r3 = held(await reading);
    expect(r3.fence).toBe(w.fence! + 1);
    expect(await d.release(key, r3)).toEqual({ type: "ok", value: { released: true } });
    expect(await locksOf(key)).toEqual([]);
  }, 20_000);
});

describe("postgres-advisory cancellation", () => {
  it("an aborted wait is cancelled at the server: fail cancelled, naming its owner and the holder, and no lock of its session left", async () => {
    const key = "cancel";
    const holder = lock("holder"), waiter = lock("waiter"), next = lock("next");
    const h = held(await holder.acquire(key, 5000, 0));
    const abort = new AbortController();
    const waiting = waiter.acquire(key, 5000, 10_000, { mode: "write", signal: abort.signal });
    // The server has the waiter queued.
    expect(await pending(waiting)).toBe(true);
    expect((await locksOf(key)).map((l) => l.granted)).toEqual([true, false]);
    const began = Date.now();
    abort.abort();
    expect(await waiting).toEqual({ type: "fail", error: "cancelled", value: { owner: "waiter-h1", behind: h.owner } });
    expect(Date.now() - began).toBeLessThan(1000);
    expect(await locksOf(key)).toEqual([{ pid: h.extra!.backend_pid, mode: "ExclusiveLock", granted: true }]);
    // Its session lives on, and takes the lock at once when it is free.
    await holder.release(key, h);
    const again = held(await waiter.acquire(key, 5000, 1000));
    expect(again.fence).toBe(h.fence! + 1);
    expect(await next.acquire(key, 5000, 0)).toEqual({ type: "fail", error: "busy" });
    await waiter.release(key, again);
  }, 20_000);

  it("a signal that aborted before the acquire: nothing sent, cancelled", async () => {
    const key = "cancel-early";
    const a = lock("early");
    const abort = new AbortController();
    abort.abort();
    expect(await a.acquire(key, 5000, 1000, { signal: abort.signal })).toEqual({ type: "fail", error: "cancelled", value: { owner: "early-h1" } });
    expect(await locksOf(key)).toEqual([]);
  });

  it("a cancel whose link goes silent is unknown; the server process waits on until it is granted and finds its client gone", async () => {
    const key = "cancel-silent";
    const proxy = await startProxyServer({ port: 0 });
    try {
      const node = server.node();
      const p = await new Toxiproxy(proxy.url).createProxy({ name: "pg-silent", listen: "127.0.0.1:0", upstream: `${node.host}:${node.port}` });
      const holder = lock("holder2"), waiter = lock("waiter2", { ...node, host: "127.0.0.1", port: Number(p.listen.split(":").pop()) });
      const h = held(await holder.acquire(key, 5000, 0));
      const abort = new AbortController();
      const waiting = waiter.acquire(key, 5000, 10_000, { signal: abort.signal });
      expect(await pending(waiting)).toBe(true);
      // Nothing comes back from the server any more, on that link or on a new one (the cancel's).
      await p.addToxic({ name: "silent", type: "timeout", stream: "downstream", toxicity: 1, attributes: { timeout: 0 } } as never);
      abort.abort();
      const err = await waiting.then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(UnknownOutcome);
      expect((err as UnknownOutcome).error).toBe("cancel-unknown");
      // The server still has it queued.
      expect((await locksOf(key)).map((l) => l.granted)).toEqual([true, false]);
      await holder.release(key, h);
      // Granted, it answers into the silent link, reads its client's goodbye and exits: the lock is free.
      const deadline = Date.now() + 5000;
      while ((await locksOf(key)).length > 0 && Date.now() < deadline) await sleep(100);
      expect(await locksOf(key)).toEqual([]);
    } finally {
      await proxy.close();
    }
  }, 20_000);
});
