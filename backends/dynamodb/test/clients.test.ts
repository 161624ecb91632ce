// The DynamoDB lock clients against a real dynalite made as a run makes it, and
// the rules they share (which errors are refusals, when a waiter may take over).
import { describe, it, expect, beforeAll } from "vitest";
import { Toxiproxy } from "toxiproxy-node-client";
import { rng, sleep } from "../../../lib/index.ts";
import { type LockClient, type MakeClient } from "../../../clients/index.ts";
import { CLIENTS } from "../../index.ts";
import { UnknownOutcome, type ClientContext, type Hold, type Outcome } from "../../../clients/lock.ts";
import { classifyDynamoError } from "../connection.ts";
import { nextStep } from "../rvn.ts";
import { retriesWithin } from "../dynamodb-lock-client.ts";
import { startProxyServer } from "../../../proxy/index.ts";
import { useDynamoServer } from "./server.ts";

const KINDS = ["dynamodb-cas", "dynamodb-rvn", "dynamodb-lock-client"] as const;
type Kind = (typeof KINDS)[number];

const made: Partial<Record<Kind, MakeClient>> = {};
beforeAll(async () => {
  for (const k of KINDS) made[k] = await CLIENTS[k].load();
});

const clients: LockClient[] = [];
const server = useDynamoServer(() => Promise.all(clients.map((c) => c.close())));
const lock = (kind: Kind, prefix: string, o: Partial<ClientContext> = {}): LockClient => {
  const c = made[kind]!({ endpoints: [{ ...server.node() }], ownerPrefix: prefix, commandTimeoutMs: 2000, rng: rng(7, prefix), options: {}, ...o });
  clients.push(c);
  return c;
};
const held = (o: Outcome<Hold>): Hold => {
  if (o.type !== "ok") throw new Error(`not granted: ${JSON.stringify(o)}`);
  return o.value;
};

/** Short enough for the library, which waits a whole lease before it tries a held lock. */
const TTL = 300;

describe.each(KINDS)("%s", (kind) => {
  it("grants one holder at a time, with a fence one higher per grant; a hold not granted to it is refused", async () => {
    const key = `${kind}-k1`;
    const a = lock(kind, `${kind}-a`), b = lock(kind, `${kind}-b`);
    const h1 = held(await a.acquire(key, TTL, 0));
    expect(await b.acquire(key, TTL, 0)).toEqual({ type: "fail", error: "busy" });
    const stranger: Hold = { owner: `${kind}-nobody`, fence: h1.fence, ttlMs: TTL };
    expect(await b.release(key, stranger)).toEqual({ type: "fail", error: "not-owner" });
    if (kind !== "dynamodb-lock-client") expect(await b.renew(key, stranger, TTL)).toEqual({ type: "fail", error: "not-owner" });
    expect((await server.item(key))?.owner).toBe(h1.owner);
    expect(await a.release(key, h1)).toEqual({ type: "ok", value: { released: true } });
    const h2 = held(await b.acquire(key, TTL, 1000));
    expect(h2.fence).toBe(h1.fence! + 1);
    expect(await b.release(key, h2)).toEqual({ type: "ok", value: { released: true } });
    // The item stays when released, so the fence keeps counting (the library's keeps its owner too, with a lease of 1 ms).
    expect(await server.item(key)).toMatchObject(kind === "dynamodb-lock-client" ? { leaseDurationMs: 1 } : { fence: h2.fence });
    if (kind !== "dynamodb-lock-client") expect((await server.item(key))?.owner).toBeUndefined();
    expect(held(await a.acquire(key, TTL, 1000)).fence).toBe(h2.fence! + 1);
  });

  it("five clients at once on a free lock: exactly one is granted it", async () => {
    const key = `${kind}-race`;
    const racers = Array.from({ length: 5 }, (_, i) => lock(kind, `${kind}-r${i}`));
    const got = await Promise.all(racers.map((c) => c.acquire(key, TTL, 0)));
    expect(got.filter((g) => g.type === "ok")).toHaveLength(1);
    expect(got.filter((g) => g.type === "fail").map((g) => g.type === "fail" && g.error)).toEqual(["busy", "busy", "busy", "busy"]);
  });
});

describe("dynamodb-cas", () => {
  it("a lease over by the client's clock is granted again; the late holder can neither renew nor release", async () => {
    const a = lock("dynamodb-cas", "cas-late"), b = lock("dynamodb-cas", "cas-next");
    const h1 = held(await a.acquire("cas-k", TTL, 0));
    await sleep(TTL + 100);
    const h2 = held(await b.acquire("cas-k", TTL, 0));
    expect(h2.fence).toBe(h1.fence! + 1);
    expect(await a.renew("cas-k", h1, TTL)).toEqual({ type: "fail", error: "not-owner" });
    expect(await a.release("cas-k", h1)).toEqual({ type: "fail", error: "not-owner" });
    expect(await server.item("cas-k")).toMatchObject({ owner: h2.owner, fence: h2.fence });
  });
});

describe("dynamodb-rvn", () => {
  const LEASE = 400;

  it("a waiter takes a lock whose heartbeats go on never, and one whose heartbeats stopped after a whole lease", async () => {
    const a = lock("dynamodb-rvn", "rvn-holder"), b = lock("dynamodb-rvn", "rvn-waiter");
    const h1 = held(await a.acquire("rvn-k", LEASE, 0));
    let beating = true;
    const heart = (async () => {
      while (beating) {
        expect((await a.renew("rvn-k", h1, LEASE)).type).toBe("ok");
        await sleep(LEASE / 4);
      }
    })();
    // Two and a half leases of waiting, and the rvn never stood still for one.
    expect(await b.acquire("rvn-k", LEASE, 2.5 * LEASE)).toEqual({ type: "fail", error: "timeout" });
    beating = false;
    await heart;
    const stopped = performance.now();
    const h2 = held(await b.acquire("rvn-k", LEASE, 3 * LEASE));
    const waited = performance.now() - stopped;
    expect(waited).toBeGreaterThanOrEqual(LEASE);
    expect(waited).toBeLessThan(2 * LEASE + 300);
    expect(h2.fence).toBe(h1.fence! + 1);
    // The old holder's next heartbeat finds the rvn gone: it learns it lost the lock.
    expect(await a.renew("rvn-k", h1, LEASE)).toEqual({ type: "fail", error: "not-owner" });
  });

  it("a heartbeat whose reply is lost took effect, the holder keeps its old rvn, and its next heartbeat fails (dynamolock #280)", async () => {
    const proxy = await startProxyServer({ port: 0 });
    try {
      const node = server.node();
      const p = await new Toxiproxy(proxy.url).createProxy({ name: "rvn-lost-reply", listen: "127.0.0.1:0", upstream: `${node.host}:${node.port}` });
      const a = lock("dynamodb-rvn", "rvn-280", { endpoints: [{ name: node.name, host: "127.0.0.1", port: Number(p.listen.split(":").pop()) }], commandTimeoutMs: 400 });
      const h = held(await a.acquire("rvn-280", 5000, 0));
      const before = (await server.item("rvn-280"))?.rvn;
      // The requests still reach dynalite; nothing comes back.
      const toxic = await p.addToxic({ name: "lost-replies", type: "timeout", stream: "downstream", toxicity: 1, attributes: { timeout: 0 } } as never);
      const err = await a.renew("rvn-280", h, 5000).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(UnknownOutcome);
      expect((err as UnknownOutcome).error).toBe("timeout");
      // An acquire whose read goes unanswered sent no write: certainly not granted.
      expect(await a.acquire("rvn-280-other", 5000, 0)).toEqual({ type: "fail", error: "timeout" });
      const after = await server.item("rvn-280");
      expect(after?.rvn).not.toBe(before);
      expect(after?.owner).toBe(h.owner);
      await toxic.remove();
      expect(await a.renew("rvn-280", h, 5000)).toEqual({ type: "fail", error: "not-owner" });
      expect(await a.release("rvn-280", h)).toEqual({ type: "fail", error: "not-owner" });
    } finally {
      await proxy.close();
    }
  }, 20_000);

  it("the waiter's rule: free is granted; a new rvn restarts the wait; the same rvn a whole lease later is taken over", () => {
    expect(nextStep(null, null, 0)).toEqual({ grant: "free" });
    expect(nextStep({ lockKey: "k", fence: 3, rvn: "x" }, null, 0)).toEqual({ grant: "free" });
    const item = { lockKey: "k", owner: "o", rvn: "x", leaseMs: 100, fence: 3 };
    const first = nextStep(item, null, 10);
    expect(first).toEqual({ wait: { rvn: "x", since: 10, leaseMs: 100 } });
    const seen = "wait" in first ? first.wait : null;
    expect(nextStep(item, seen, 109)).toEqual({ wait: seen });
    expect(nextStep(item, seen, 110)).toEqual({ grant: "takeover", rvn: "x" });
    expect(nextStep({ ...item, rvn: "y" }, seen, 500)).toEqual({ wait: { rvn: "y", since: 500, leaseMs: 100 } });
  });
});

describe("dynamodb-lock-client", () => {
  it("a holder that stops heartbeating loses the lock a lease later; a failed heartbeat is a suspended notice, never a lost one", async () => {
    const a = lock("dynamodb-lock-client", "dlc-stops"), b = lock("dynamodb-lock-client", "dlc-next");
    const h1 = held(await a.acquire("dlc-k", TTL, 0));
    await a.close();
    const h2 = held(await b.acquire("dlc-k", TTL, 1000));
    expect(h2.fence).toBe(h1.fence! + 1);

    const proxy = await startProxyServer({ port: 0 });
    try {
      const node = server.node();
      const p = await new Toxiproxy(proxy.url).createProxy({ name: "dlc-cut", listen: "127.0.0.1:0", upstream: `${node.host}:${node.port}` });
      const notices: Array<[string, string | undefined, string | null]> = [];
      const c = lock("dynamodb-lock-client", "dlc-cut", {
        endpoints: [{ name: node.name, host: "127.0.0.1", port: Number(p.listen.split(":").pop()) }],
        commandTimeoutMs: 300,
        notice: (f, key, owner) => notices.push([f, key, owner]),
      });
      await b.release("dlc-k", h2);
      const h3 = held(await c.acquire("dlc-k", TTL, 1000));
      await p.addToxic({ name: "cut", type: "timeout", stream: "upstream", toxicity: 1, attributes: { timeout: 0 } } as never);
      const deadline = Date.now() + 3000;
      while (notices.length === 0 && Date.now() < deadline) await sleep(50);
      expect(notices).toEqual([["suspended", "dlc-k", h3.owner]]);
    } finally {
      await proxy.close();
    }
  }, 20_000);

  it("tries as often as the acquire timeout holds whole leases", () => {
    expect(retriesWithin(0, 1000)).toBe(0);
    expect(retriesWithin(2000, 1000)).toBe(1);
    expect(retriesWithin(5000, 1000)).toBe(4);
  });
});

describe("what an error says of its request", () => {
  const v3 = (name: string, extra: Record<string, unknown> = {}) => Object.assign(new Error("x"), { name, ...extra });
  it.each([
    ["a failed condition (v3)", v3("ConditionalCheckFailedException"), { definite: true, error: "condition-failed" }],
    ["a failed condition (v2)", { code: "ConditionalCheckFailedException", message: "The conditional request failed" }, { definite: true, error: "condition-failed" }],
    ["a refused request", v3("ValidationException"), { definite: true, error: "invalid-request" }],
    ["a missing table (a memory server restarted)", v3("ResourceNotFoundException"), { definite: true, error: "no-table" }],
    ["a refused connection (v3)", Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }), { definite: true, error: "conn-refused" }],
    ["a refused connection (v2)", { code: "UnknownEndpoint", message: "Inaccessible host", originalError: { code: "NetworkingError", message: "connect ECONNREFUSED 127.0.0.1:1" } }, { definite: true, error: "conn-refused" }],
    ["the request timeout (v3)", v3("TimeoutError", { code: "ETIMEDOUT" }), { definite: false, error: "timeout" }],
    ["the socket timeout (v2)", { code: "TimeoutError", message: "Connection timed out after 500ms" }, { definite: false, error: "timeout" }],
    ["a connection closed under the request", v3("TimeoutError", { code: "ECONNRESET", message: "socket hang up" }), { definite: false, error: "conn-reset" }],
    ["a reset", Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }), { definite: false, error: "conn-reset" }],
    ["anything else", v3("InternalServerError"), { definite: false, error: "internal-server-error" }],
  ])("%s", (_what, err, expected) => {
    expect(classifyDynamoError(err)).toEqual(expected);
  });
});
