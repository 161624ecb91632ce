// The Redlock clients against five real redis-server nodes: one holder at a
// time, validity reported, renew and release, no lock without a majority (nodes
// frozen with SIGSTOP, or killed), and where fences come from.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Redis } from "ioredis";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import { startRedisCluster } from "../../redis/servers.ts";
import type { Cluster } from "../../../cluster/cluster.ts";
import { type ClientOptions, type Endpoint, type Hold, type LockClient, type Outcome, type MakeClient } from "../../../clients/index.ts";
import { CLIENTS } from "../../index.ts";
import { fenceKey } from "../../redis/client.ts";
import { rng } from "../../../lib/index.ts";
import { tempRunDir } from "../../../test/helpers.ts";

/** Each client kind's maker, its module loaded once for the file (clients are made synchronously below). */
const made: Record<string, MakeClient> = {};
beforeAll(async () => {
  for (const [name, kind] of Object.entries(CLIENTS)) made[name] = await kind.load();
});

const NAMES = ["node-redlock", "node-redlock-4", "redlock", "sesame-redlock"] as const;
const COMMAND_TIMEOUT_MS = 500;

let group: ProcessGroup;
let cluster: Cluster;
let endpoints: Endpoint[];
let direct: Redis[];
const clients: LockClient[] = [];

function make(name: string, prefix: string, options: ClientOptions = {}, commandTimeoutMs = COMMAND_TIMEOUT_MS): LockClient {
  const c = made[name]({
    endpoints,
    ownerPrefix: prefix,
    commandTimeoutMs,
    rng: rng(11, prefix),
    options: { fenceSource: "max-incr", ...options },
  });
  clients.push(c);
  return c;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function held(o: Outcome<Hold>): Hold {
  if (o.type !== "ok") throw new Error(`expected a hold, got ${JSON.stringify(o)}`);
  return o.value;
}

beforeAll(async () => {
  const dir = tempRunDir();
  group = new ProcessGroup(dir);
  cluster = await startRedisCluster(group, new PortPlan(0), 5, { runDir: dir });
  endpoints = cluster.nodes.map((n) => ({ name: n.name, host: n.host, port: n.port }));
  direct = cluster.nodes.map((n) => new Redis({ host: n.host, port: n.port, maxRetriesPerRequest: 1 }).on("error", () => {}));
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  for (const r of direct ?? []) r.disconnect();
  await group?.stopAll();
});

describe.each(NAMES)("%s over five nodes", (name) => {
  const key = (k: string): string => `${name}-${k}`;

  it("grants one holder at a time, reports validity, and max-incr fences increase", async () => {
    const a = make(name, `${name}-a`), b = make(name, `${name}-b`);
    const k = key("one");
    const ha = held(await a.acquire(k, 5000, 0));
    const validity = ha.extra?.validity_ms as number;
    expect(validity).toBeGreaterThan(0);
    expect(validity).toBeLessThanOrEqual(5000 - 50);
    expect((ha.extra?.granted as string[]).length).toBeGreaterThanOrEqual(3);
    expect(await b.acquire(k, 5000, 0)).toEqual({ type: "fail", error: "busy" });
    // Retried within the timeout, still refused.
    expect(await b.acquire(k, 5000, 400)).toEqual({ type: "fail", error: "busy" });
    expect(await a.release(k, ha)).toEqual({ type: "ok", value: { released: true } });
    const hb = held(await b.acquire(k, 5000, 0));
    expect(hb.owner).not.toBe(ha.owner);
    expect(await b.release(k, hb)).toEqual({ type: "ok", value: { released: true } });
    const ha2 = held(await a.acquire(k, 5000, 0));
    expect(ha2.owner).not.toBe(ha.owner);
    expect(typeof ha.fence).toBe("number");
    expect(hb.fence!).toBeGreaterThan(ha.fence!);
    expect(ha2.fence!).toBeGreaterThan(hb.fence!);
    // max-incr counted on every node that granted.
    const granted = ha2.extra?.granted as string[];
    for (const n of granted) expect(Number(await direct[endpoints.findIndex((e) => e.name === n)].get(fenceKey(k)))).toBeGreaterThanOrEqual(1);
    await a.release(k, ha2);
  });

  it("renews its own lease and releases it; a lease left alone expires", async () => {
    const a = make(name, `${name}-c`), b = make(name, `${name}-d`);
    const k = key("renew");
    // Renewals 400 ms apart on a 1500 ms lease: one may come about a second late on
    // a busy machine and still find the lease valid; the per-node wait (a tenth of
    // the TTL) grows with it.
    const h = held(await a.acquire(k, 1500, 0));
    for (let i = 0; i < 4; i++) {
      await sleep(400);
      expect(await a.renew(k, h, 1500)).toEqual({ type: "ok", value: { ttlMs: 1500 } });
    }
    // Past the first lease, yet still held thanks to the renewals.
    expect((await b.acquire(k, 1500, 0)).type).toBe("fail");
    // Left alone, it expires: b, retrying, gets in.
    const hb = held(await b.acquire(k, 5000, 5000));
    const renew = await a.renew(k, h, 1500);
    expect(renew.type).toBe("fail");
    expect(["not-owner", "expired"]).toContain(renew.type === "fail" ? renew.error : "");
    // Its release leaves b's hold alone. It may still find a key of its own on a node b did not
    // need for its majority, where a's last renew landed late (released: true on a loaded machine).
    expect((await a.release(k, h)).type).toBe("ok");
    expect((await make(name, `${name}-e`).acquire(k, 5000, 0)).type).toBe("fail");
    expect(await b.release(k, hb)).toEqual({ type: "ok", value: { released: true } });
  });

  it("with three nodes frozen it never claims the lock: the outcome is unknown, and nothing is left behind", async () => {
    const a = make(name, `${name}-f`), b = make(name, `${name}-g`);
    const k = key("frozen");
    await a.acquire(key("warm"), 1000, 0); // connect every node first
    const frozen = ["redis-3", "redis-4", "redis-5"];
    for (const n of frozen) expect(group.pause(n)).toBe(true);
    try {
      // The SETs sit in the frozen nodes' buffers: they may still be applied, so it cannot say `fail`.
      await expect(a.acquire(k, 5000, 0)).rejects.toMatchObject({ code: "maybe-held" });
    } finally {
      for (const n of frozen) group.resume(n);
    }
    // Thawed, the nodes run the SET and then the unlock queued behind it: the lock is free.
    const hb = held(await b.acquire(k, 5000, 1500));
    await b.release(k, hb);
  });

  it("with three nodes killed it fails with no-quorum, and works again once they are back", async () => {
    const a = make(name, `${name}-h`);
    const k = key("killed");
    await a.acquire(key("warm2"), 1000, 0);
    const dead = ["redis-3", "redis-4", "redis-5"];
    for (const n of dead) await cluster.kill!(n);
    try {
      await sleep(200); // the clients see the connections close
      expect(await a.acquire(k, 5000, 0)).toEqual({ type: "fail", error: "no-quorum" });
    } finally {
      for (const n of dead) await cluster.restart!(n);
    }
    // One round at a time while ioredis reconnects to the restarted nodes, each on
    // its own backoff: a round that finds some still down is no-quorum, never busy.
    // (One call with retries would not do: the sesame fork's rounds keep the keys
    // of the rounds before, so nodes coming back one by one can find its own keys
    // on a majority and say busy, until its final unlock.)
    const until = Date.now() + 5000;
    let o = await a.acquire(k, 5000, 0);
    while (o.type === "fail" && o.error === "no-quorum" && Date.now() < until) {
      await sleep(50);
      o = await a.acquire(k, 5000, 0);
    }
    const h = held(o);
    expect(await a.release(k, h)).toEqual({ type: "ok", value: { released: true } });
  });

  it("fence-source single counts on redis-1 alone; none gives no fence", async () => {
    const s = make(name, `${name}-i`, { fenceSource: "single" });
    const k = key("single");
    const h1 = held(await s.acquire(k, 5000, 0));
    await s.release(k, h1);
    const h2 = held(await s.acquire(k, 5000, 0));
    await s.release(k, h2);
    expect([h1.fence, h2.fence]).toEqual([1, 2]);
    expect(await Promise.all(direct.map((r) => r.get(fenceKey(k))))).toEqual(["2", null, null, null, null]);

    const n = make(name, `${name}-j`, { fenceSource: "none" });
    const kn = key("none");
    const h = held(await n.acquire(kn, 5000, 0));
    expect(h.fence).toBeNull();
    await n.release(kn, h);
    expect(await Promise.all(direct.map((r) => r.exists(fenceKey(kn))))).toEqual([0, 0, 0, 0, 0]);
  });
});

describe("the sesame fork's own retries", () => {
  it("several rounds against three frozen nodes: judged on every round's calls, the outcome is unknown, and nothing is left behind", async () => {
    const a = make("sesame-redlock", "sesame-r1"), b = make("sesame-redlock", "sesame-r2");
    await a.acquire("sesame-warm", 1000, 0);
    const frozen = ["redis-3", "redis-4", "redis-5"];
    for (const n of frozen) expect(group.pause(n)).toBe(true);
    try {
      // 600 ms: three rounds of its own, each waiting out the frozen nodes' command timeout.
      await expect(a.acquire("sesame-retried", 5000, 600)).rejects.toMatchObject({ code: "maybe-held" });
    } finally {
      for (const n of frozen) group.resume(n);
    }
    const hb = held(await b.acquire("sesame-retried", 5000, 1500));
    await b.release("sesame-retried", hb);
  });

  it("a busy lock: every round refused, so certainly not acquired", async () => {
    const a = make("sesame-redlock", "sesame-r3"), b = make("sesame-redlock", "sesame-r4");
    const h = held(await a.acquire("sesame-busy", 5000, 0));
    const t0 = Date.now();
    expect(await b.acquire("sesame-busy", 5000, 600)).toEqual({ type: "fail", error: "busy" });
    // Its own 3 rounds, 200 +- 100 ms apart: not one round and not our deadline loop.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(3 * 100);
    await a.release("sesame-busy", h);
  });
});

describe("a quorum that answers after the lease's validity (a 2 ms TTL: validity = 2 - elapsed - 2.02 < 0)", () => {
  // The K5 line between the clients, on real nodes: node-redlock 5 returns such a
  // lock as held; redlock 4 and the project's client refuse it, unless told not to check.
  it("node-redlock 5 takes it, with a validity already over", async () => {
    const h = held(await make("node-redlock", "v5").acquire("late-5", 2, 0));
    expect(h.extra?.validity_ms as number).toBeLessThanOrEqual(0);
  });

  it("the sesame fork takes it too: it checks no validity either", async () => {
    const h = held(await make("sesame-redlock", "sesame").acquire("late-sesame", 2, 0));
    expect(h.extra?.validity_ms as number).toBeLessThanOrEqual(0);
  });

  it("node-redlock 4 refuses it", async () => {
    expect(await make("node-redlock-4", "v4").acquire("late-4", 2, 0)).toEqual({ type: "fail", error: "expired" });
  });

  it("redlock refuses it, and takes it with checkValidity off", async () => {
    expect(await make("redlock", "own").acquire("late-own", 2, 0)).toEqual({ type: "fail", error: "expired" });
    const h = held(await make("redlock", "own-trusting", { own: { "redlock-check-validity": false } }).acquire("late-own-2", 2, 0));
    expect(h.extra?.validity_ms as number).toBeLessThan(0);
  });
});

/** Blocks this process's event loop, as a GC pause would: replies pile up unread. */
function freeze(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // spin
  }
}

/** Starts an acquire, and freezes the process once its requests are out, before it reads a reply (K5). */
async function acquireThenFreeze(c: LockClient, key: string, ttlMs: number, freezeMs: number): Promise<Outcome<Hold>> {
  // Connected first, so the requests leave at once.
  held(await c.acquire(`${key}-warm`, 100, 0));
  const p = c.acquire(key, ttlMs, 0);
  // Runs after the microtasks that sent the requests, before any reply is read.
  setImmediate(() => freeze(freezeMs));
  return p;
}

describe("a client frozen after sending, before reading the replies (K5)", () => {
  it("the project's client still reads the OKs that arrived: a frozen loop is not a silent node", async () => {
    // TTL 1000 ms: it waits 100 ms for each node, and is frozen 300 ms, past that wait but within the lease.
    const h = held(await acquireThenFreeze(make("redlock", "k5-a"), "k5-short", 1000, 300));
    expect(h.extra?.validity_ms as number).toBeGreaterThan(0);
    expect(h.extra?.validity_ms as number).toBeLessThan(1000 - 300);
    expect((h.extra?.granted as string[]).length).toBe(5);
  });

  it("past the TTL: node-redlock 5 and an unchecking client trust the buffered OKs; redlock 4 and the checking client refuse", async () => {
    // TTL 300 ms, frozen 400 ms: the keys have expired on every node by the time the OKs are read.
    // Commands time out after 3 s here, not 500 ms: a loaded machine that wakes the
    // loop late would otherwise fire a command's timeout before the reply already
    // waiting on its socket is read, and node-redlock 4 would count a vote short.
    const slow = (name: string, prefix: string, options: ClientOptions = {}): LockClient => make(name, prefix, options, 3000);
    const v5 = held(await acquireThenFreeze(slow("node-redlock", "k5-v5"), "k5-v5", 300, 400));
    expect(v5.extra?.validity_ms as number).toBeLessThan(0);
    expect(await acquireThenFreeze(slow("node-redlock-4", "k5-v4"), "k5-v4", 300, 400)).toEqual({ type: "fail", error: "expired" });
    expect(await acquireThenFreeze(slow("redlock", "k5-own"), "k5-own", 300, 400)).toEqual({ type: "fail", error: "expired" });
    const trusting = held(await acquireThenFreeze(slow("redlock", "k5-trust", { own: { "redlock-check-validity": false } }), "k5-trust", 300, 400));
    expect(trusting.extra?.validity_ms as number).toBeLessThan(0);
    // And the lock it believes it holds is free for anyone: the keys are gone.
    held(await make("redlock", "k5-other").acquire("k5-trust", 5000, 0));
  });
});

