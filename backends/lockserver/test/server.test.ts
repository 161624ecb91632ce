// A real lock server process, as a run starts it, with the lockserver client:
// one holder at a time with fences rising, a waiter granted at release, a bad
// request answered, a frozen server an unknown outcome, and what a kill and a
// restart keep: the journal (always) or nothing (none: the fences start over).
import { describe, it, expect, afterAll } from "vitest";
import { createConnection } from "node:net";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import { startLockServers, type LockServerPersistence } from "../servers.ts";
import { LockServerLock } from "../client.ts";
import { UnknownOutcome, type Hold, type Outcome } from "../../../clients/lock.ts";
import { rng } from "../../../lib/index.ts";
import { tempRunDir } from "../../../test/helpers.ts";

const groups: ProcessGroup[] = [];
afterAll(() => Promise.all(groups.map((g) => g.stopAll())));

async function server(persistence: LockServerPersistence) {
  const dir = tempRunDir("fc-lockserver-");
  const group = new ProcessGroup(dir);
  groups.push(group);
  const cluster = await startLockServers(group, new PortPlan(0), { runDir: dir, count: 1, persistence });
  const client = (name: string, commandTimeoutMs = 1000) =>
    new LockServerLock({ endpoints: [cluster.nodes[0]], ownerPrefix: name, commandTimeoutMs, rng: rng(1, name), options: {} });
  return { cluster, client, name: cluster.nodes[0].name };
}

const held = (o: Outcome<Hold>): Hold => {
  if (o.type !== "ok") throw new Error(`not granted: ${JSON.stringify(o)}`);
  return o.value;
};

describe("a lock server process", () => {
  it("one holder at a time, a waiter granted at release, fences rising; a stranger refused; a bad request answered", async () => {
    const { client, cluster } = await server("none");
    const a = client("a"), b = client("b");
    const h1 = held(await a.acquire("k", 2000, 0));
    expect(await b.acquire("k", 2000, 0)).toEqual({ type: "fail", error: "busy" });
    const asked = performance.now();
    const waiting = b.acquire("k", 2000, 2000);
    const stranger: Hold = { owner: "b-nobody", fence: h1.fence, ttlMs: 2000 };
    expect(await b.renew("k", stranger, 2000)).toEqual({ type: "fail", error: "not-owner" });
    expect(await b.release("k", stranger)).toEqual({ type: "fail", error: "not-owner" });
    expect(await a.renew("k", h1, 2000)).toEqual({ type: "ok", value: { ttlMs: 2000 } });
    // Held a while longer, so that the wait is long beside the moments a busy machine adds to the queueing.
    await new Promise((r) => setTimeout(r, 200));
    expect(await a.release("k", h1)).toEqual({ type: "ok", value: { released: true } });
    const h2 = held(await waiting);
    const waited = performance.now() - asked;
    expect(h2.fence).toBe(h1.fence! + 1);
    // Its place was taken when the server queued it, well before its grant: the fairness count's arrival.
    expect(h2.extra?.queued_ms).toBeGreaterThan(0);
    expect(h2.extra?.queued_ms as number).toBeLessThan(waited / 2);
    expect(await a.acquire("k", 2000, 100)).toEqual({ type: "fail", error: "timeout" });
    await Promise.all([a.close(), b.close()]);

    const node = cluster.nodes[0];
    const replies = await new Promise<string>((resolve) => {
      const s = createConnection(node.port, node.host, () => s.write(`nonsense\n{"id":9,"op":"acquire","key":"k"}\n`));
      let got = "";
      s.on("data", (d) => {
        got += d;
        if (got.split("\n").length > 2) resolve(got), s.destroy();
      });
    });
    expect(replies.trim().split("\n").map((l) => JSON.parse(l))).toEqual([
      { id: null, ok: false, error: "bad-request", message: "not JSON" },
      { id: 9, ok: false, error: "bad-request", message: "owner must be a non-empty string" },
    ]);
  });

  it("frozen: a request without a reply is an unknown outcome; thawed, it answers again", async () => {
    const { client, cluster, name } = await server("none");
    const a = client("a", 300);
    held(await a.acquire("k", 5000, 0));
    await cluster.pause(name);
    await expect(a.acquire("j", 5000, 0)).rejects.toBeInstanceOf(UnknownOutcome);
    await cluster.resume(name);
    held(await a.acquire("i", 5000, 0));
    await a.close();
  });

  it.each([
    ["always", 2, "the holder and the fence counter kept"],
    ["none", 1, "nothing kept: free again, the fence counter from 0"],
  ] as const)("--persistence %s: killed and restarted, the next grant's fence is %i (%s)", async (persistence, fence, _kept) => {
    const { client, cluster, name } = await server(persistence);
    const a = client("a");
    held(await a.acquire("k", 60_000, 0));
    const h2 = held(await a.acquire("k2", 60_000, 0));
    await a.release("k2", h2);
    await cluster.kill(name);
    // Its connection was reset under it. A request written before the client noticed is in
    // doubt (the close may come after the write); once it has, a request finds no server: certainly not done.
    let after = await a.acquire("k", 60_000, 0).catch((e: unknown) => e);
    if (after instanceof UnknownOutcome) after = await a.acquire("k", 60_000, 0);
    expect(after).toEqual({ type: "fail", error: "unavailable" });
    await cluster.restart(name);
    // k's holder: still held (always) or free (none).
    expect(await client("b").acquire("k", 60_000, 0)).toMatchObject(persistence === "always" ? { type: "fail", error: "busy" } : { type: "ok" });
    // k2 was granted once (fence 1) and released before the kill: the next grant's fence is 2, or 1 again.
    expect(held(await client("c").acquire("k2", 60_000, 0)).fence).toBe(fence);
    await a.close();
  });
});
