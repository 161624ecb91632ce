// The etcd lock clients against three real etcd members. Holders that must freeze
// run in a child process (etcd-child.ts) that the test SIGSTOPs for real.
import { describe, it, expect, afterAll } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import type { Etcd3 } from "etcd3";
import type { Hold, LockClient } from "../../../clients/index.ts";
import { QUEUE_PREFIX } from "../queue.ts";
import { LOCK_PREFIX } from "../etcd3-lock.ts";
import { rng } from "../../../lib/index.ts";
import { REPO } from "../../../test/helpers.ts";
import { useEtcdCluster, held, settled, sleep } from "./cluster.ts";

const cluster = useEtcdCluster("fc-etcd-clients-");
const { made, lock, keysUnder } = cluster;
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
});

/** A lock client in a process of its own. */
function child(kind: string): { proc: ChildProcess; ask(cmd: string): Promise<Record<string, unknown>>; next(): Promise<Record<string, unknown>> } {
  const proc = spawn(process.execPath, ["--import", "tsx", "backends/etcd/test/child.ts", kind, JSON.stringify(cluster.endpoints)], { cwd: REPO, stdio: ["pipe", "pipe", "inherit"] });
  children.push(proc);
  const lines: string[] = [];
  const waiting: Array<(l: string) => void> = [];
  let buf = "";
  proc.stdout!.on("data", (d) => {
    buf += d;
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      const l = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const w = waiting.shift();
      if (w) w(l);
      else lines.push(l);
    }
  });
  const next = () => new Promise<Record<string, unknown>>((resolve) => {
    const l = lines.shift();
    if (l !== undefined) resolve(JSON.parse(l));
    else waiting.push((x) => resolve(JSON.parse(x)));
  });
  return { proc, next, ask: (cmd) => (proc.stdin!.write(cmd + "\n"), next()) };
}

const lockKeyOf = (kind: string, key: string, hold: Hold): string =>
  kind === "etcd-queue" ? `${QUEUE_PREFIX}/${key}/${hold.extra!.lease}` : `${LOCK_PREFIX}/${key}`;

describe.each(["etcd-queue", "etcd3-lock"])("%s", (kind) => {
  const k = (name: string) => `${kind}-${name}`;

  it("grants one holder at a time, with fences that are the lock keys' create revisions and grow", async () => {
    const a = lock(kind, "a"), b = lock(kind, "b");
    const ha = held(await a.acquire(k("one"), 5000, 0));
    // etcd-queue names the owner of the key it waited behind.
    const behind = kind === "etcd-queue" ? { value: { behind: ha.owner } } : {};
    expect(await b.acquire(k("one"), 5000, 0)).toEqual({ type: "fail", error: "busy", ...behind });
    expect(await b.acquire(k("one"), 5000, 300)).toEqual({ type: "fail", error: "timeout", ...behind });
    const prefix = kind === "etcd-queue" ? `${QUEUE_PREFIX}/${k("one")}/` : `${LOCK_PREFIX}/${k("one")}`;
    // Given up waiters leave nothing behind: the holder's key is the only one.
    expect(await keysUnder(prefix)).toEqual([{ key: lockKeyOf(kind, k("one"), ha), createRevision: ha.fence }]);
    expect(await a.release(k("one"), ha)).toEqual({ type: "ok", value: { released: true } });
    expect(await keysUnder(prefix)).toEqual([]);
    const hb = held(await b.acquire(k("one"), 5000, 0));
    expect(hb.fence).toBeGreaterThan(ha.fence!);
    expect(hb.owner).not.toBe(ha.owner);
    expect((await b.release(k("one"), hb)).type).toBe("ok");
  });

  it("lets a waiter in once the holder releases", async () => {
    const a = lock(kind, "c"), b = lock(kind, "d");
    const ha = held(await a.acquire(k("wait"), 5000, 0));
    const waiting = b.acquire(k("wait"), 5000, 8000);
    const done = settled(waiting);
    await sleep(400);
    expect(done()).toBe(false);
    await a.release(k("wait"), ha);
    const hb = held(await waiting);
    expect(hb.fence).toBeGreaterThan(ha.fence!);
    await b.release(k("wait"), hb);
  });

  it("rounds the lease TTL up to whole seconds and says so in the ok value", async () => {
    const a = lock(kind, "e");
    const h = held(await a.acquire(k("round"), 1500, 0));
    expect(h.ttlMs).toBe(2000);
    expect(h.extra).toMatchObject({ ttl_rounded_up_from_ms: 1500, lease: expect.stringMatching(/^[0-9a-f]+$/) });
    if (kind === "etcd3-lock") expect(h.extra!.fence_read_after).toBe(true);
    expect(await a.renew(k("round"), h, 1500)).toEqual({ type: "ok", value: { ttlMs: 2000 } });
    await a.release(k("round"), h);
  });

  it("a holder frozen past its lease loses it: the waiter gets in with a higher fence, and the holder's renew and release say it is gone", async () => {
    const holder = child(kind);
    expect(await holder.next()).toEqual({ ready: true });
    const hc = (await holder.ask(`acquire ${k("frozen")} 1000 0`)) as { type: string; value: Hold };
    expect(hc.type).toBe("ok");
    holder.proc.kill("SIGSTOP");
    try {
      const b = lock(kind, "f");
      const hb = held(await b.acquire(k("frozen"), 1000, 10_000));
      expect(hb.fence).toBeGreaterThan(hc.value.fence!);
    } finally {
      holder.proc.kill("SIGCONT");
    }
    expect(await holder.ask(`renew ${k("frozen")} 1000`)).toEqual({ type: "fail", error: "not-owner" });
    expect(await holder.ask(`release ${k("frozen")}`)).toEqual({ type: "ok", value: { released: false } });
  });

  it("certainly fails, with nothing put, when no member can be reached; close() returns at once", async () => {
    // Port 1 is privileged and no test binds it: unlike a port just closed, nothing
    // running in parallel can take it meanwhile.
    const c = lock(kind, "g", [{ name: "nowhere", host: "127.0.0.1", port: 1 }]);
    const r = await c.acquire(k("nowhere"), 1000, 500);
    expect(r).toMatchObject({ type: "fail", error: "no-lease", value: { cause: "conn-refused" } });
    const t = Date.now();
    await c.close();
    expect(Date.now() - t).toBeLessThan(1000);
  });

  it("--connections per-worker: clients of one process share one etcd3 client, each with its own holds, and it lives until the last closes", async () => {
    const make = (prefix: string) => made[kind]({ endpoints: cluster.endpoints, ownerPrefix: prefix, commandTimeoutMs: 2000, rng: rng(4, prefix), options: { sharedConnection: true } });
    const a = make("sa"), b = make("sb");
    const own = lock(kind, "sc");
    const etcd = (c: LockClient) => (c as unknown as { client: Etcd3 }).client;
    expect(etcd(a)).toBe(etcd(b));
    expect(etcd(own)).not.toBe(etcd(a));
    // Still two clients to the lock: one holds, the other waits until it lets go.
    const ha = held(await a.acquire(k("shared"), 5000, 0));
    expect(await b.acquire(k("shared"), 5000, 0)).toMatchObject({ type: "fail" });
    expect(await a.release(k("shared"), ha)).toEqual({ type: "ok", value: { released: true } });
    await a.close();
    // The connection outlives the first to close, and serves the other.
    const hb = held(await b.acquire(k("shared"), 5000, 500));
    expect(hb.fence).toBeGreaterThan(ha.fence!);
    expect(await b.release(k("shared"), hb)).toEqual({ type: "ok", value: { released: true } });
    await b.close();
    // Once the last has closed, the next client gets a new one.
    const c = make("sd");
    expect(etcd(c)).not.toBe(etcd(b));
    held(await c.acquire(k("shared"), 5000, 500));
    await c.close();
  });
});

describe("etcd-queue", () => {
  it("serves waiters in the order they arrived (FIFO by create revision)", async () => {
    const [a, b, c] = ["h", "i", "j"].map((p) => lock("etcd-queue", p));
    const queued = async (n: number): Promise<void> => {
      for (let i = 0; i < 100 && (await keysUnder(`${QUEUE_PREFIX}/fifo/`)).length < n; i++) await sleep(50);
      expect(await keysUnder(`${QUEUE_PREFIX}/fifo/`)).toHaveLength(n);
    };
    const ha = held(await a.acquire("fifo", 10_000, 0));
    const wb = b.acquire("fifo", 10_000, 15_000);
    // b's key is in the queue before c arrives, and c's before a leaves.
    await queued(2);
    const wc = c.acquire("fifo", 10_000, 15_000);
    const cDone = settled(wc);
    await queued(3);
    await a.release("fifo", ha);
    const hb = held(await wb);
    await sleep(300);
    expect(cDone()).toBe(false);
    await b.release("fifo", hb);
    const hc = held(await wc);
    expect([ha.fence!, hb.fence!, hc.fence!]).toEqual([ha.fence!, hb.fence!, hc.fence!].sort((x, y) => x - y));
    await c.release("fifo", hc);
  });

  it("a hold without renew ends with its lease: the next waiter gets in while the holder's process runs", async () => {
    const a = lock("etcd-queue", "k"), b = lock("etcd-queue", "l");
    const ha = held(await a.acquire("expiry", 1000, 0));
    const hb = held(await b.acquire("expiry", 1000, 10_000));
    expect(hb.fence).toBeGreaterThan(ha.fence!);
    expect(await a.release("expiry", ha)).toEqual({ type: "ok", value: { released: false } });
    expect(await b.release("expiry", hb)).toEqual({ type: "ok", value: { released: true } });
  });

  it("a waiter whose lease expired while it waited fails instead of taking the lock (the check Jepsen found missing)", async () => {
    const a = lock("etcd-queue", "m");
    const ha = held(await a.acquire("jepsen", 10_000, 0));
    const waiter = child("etcd-queue");
    expect(await waiter.next()).toEqual({ ready: true });
    waiter.proc.stdin!.write("acquire jepsen 1000 20000\n");
    // Queued behind the holder: two keys under the prefix.
    for (let i = 0; i < 50 && (await keysUnder(`${QUEUE_PREFIX}/jepsen/`)).length < 2; i++) await sleep(100);
    expect(await keysUnder(`${QUEUE_PREFIX}/jepsen/`)).toHaveLength(2);
    waiter.proc.kill("SIGSTOP");
    // Frozen, its keep-alives stop: its lease and key go while the holder still holds.
    for (let i = 0; i < 100 && (await keysUnder(`${QUEUE_PREFIX}/jepsen/`)).length > 1; i++) await sleep(100);
    await a.release("jepsen", ha);
    waiter.proc.kill("SIGCONT");
    // Whom it waited behind is reported when its client learned it before the freeze;
    // on a busy machine the freeze can come first. Failing, not taking the lock, is the point.
    const done = await waiter.next();
    expect(done).toMatchObject({ type: "fail", error: "lease-expired" });
    if ("value" in (done as object)) expect(done).toMatchObject({ value: { behind: ha.owner } });
  });
});

describe("etcd3-lock", () => {
  it("keeps its lease alive in the background, as the package does: a waiter times out while the holder's process runs", async () => {
    const a = lock("etcd3-lock", "n"), b = lock("etcd3-lock", "o");
    // A 3 s lease (kept alive every second) leaves room for a stalled event loop; the
    // waiter waits twice the lease, so without keep-alives it would get in.
    const ha = held(await a.acquire("background", 3000, 0));
    expect(await b.acquire("background", 3000, 6000)).toEqual({ type: "fail", error: "timeout" });
    expect(await a.release("background", ha)).toEqual({ type: "ok", value: { released: true } });
  });
});
