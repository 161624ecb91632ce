// The seed's replicated lock manager over five real lock server processes: held
// with a majority, the fence the largest of the grants' (or lockserver-1's
// counter alone), a minority down changes nothing, a majority down refuses, and
// an acquire that found no majority in time leaves nothing held anywhere.
import { describe, it, expect, afterAll, beforeAll } from "vitest";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import { startLockServers, type LockServerCluster } from "../servers.ts";
import { LockServerMajority } from "../majority.ts";
import { LockServerLock } from "../client.ts";
import { UnknownOutcome, type ClientOptions, type Hold, type Outcome } from "../../../clients/lock.ts";
import { rng } from "../../../lib/index.ts";
import { tempRunDir } from "../../../test/helpers.ts";

let group: ProcessGroup;
let cluster: LockServerCluster;
beforeAll(async () => {
  const dir = tempRunDir("fc-lockservers-");
  group = new ProcessGroup(dir);
  cluster = await startLockServers(group, new PortPlan(0), { runDir: dir, count: 5, persistence: "none" });
}, 30_000);
afterAll(() => group.stopAll());

const ctx = (name: string, options: ClientOptions = {}, endpoints = cluster.nodes) => ({ endpoints, ownerPrefix: name, commandTimeoutMs: 500, rng: rng(1, name), options });
const manager = (name: string, options: ClientOptions = {}) => new LockServerMajority(ctx(name, options));
/** A client of one server alone, to hold or test that server's lock directly. */
const single = (name: string, server: number) => new LockServerLock(ctx(name, {}, [cluster.nodes[server]]));

const held = (o: Outcome<Hold>): Hold => {
  if (o.type !== "ok") throw new Error(`not granted: ${JSON.stringify(o)}`);
  return o.value;
};

describe("lockserver-majority over five lock servers", () => {
  it("one holder at a time; a waiter granted at release; the fence the largest of its grants", async () => {
    const a = manager("a"), b = manager("b");
    const h1 = held(await a.acquire("k1", 3000, 0));
    expect(h1.extra?.granted).toHaveLength(3);
    expect(h1.fence).toBe(1);
    expect(await b.acquire("k1", 3000, 0)).toMatchObject({ type: "fail", error: "busy" });
    const waiting = b.acquire("k1", 3000, 2000);
    expect(await a.renew("k1", h1, 3000)).toEqual({ type: "ok", value: { ttlMs: 3000 } });
    expect(await a.release("k1", h1)).toEqual({ type: "ok", value: { released: true } });
    const h2 = held(await waiting);
    // Every server granted a (fence 1), then b (fence 2).
    expect(h2.fence).toBe(2);
    await b.release("k1", h2);
    await Promise.all([a.close(), b.close()]);
  });

  it("a wait that finds no majority in time is withdrawn everywhere: the servers that granted it are free again", async () => {
    // A stranger holds k2 on lockserver-1..3 directly: the manager can get 4 and 5 only.
    const strangers = [0, 1, 2].map((i) => single(`s${i}`, i));
    const theirs = await Promise.all(strangers.map((s) => s.acquire("k2", 5000, 0)));
    expect(theirs.every((o) => o.type === "ok")).toBe(true);
    const b = manager("b");
    expect(await b.acquire("k2", 3000, 300)).toEqual({ type: "fail", error: "timeout" });
    // lockserver-4 and -5 granted b, and b's release undid it: free for anyone.
    for (const i of [3, 4]) {
      const other = single(`o${i}`, i);
      expect((await other.acquire("k2", 1000, 0)).type).toBe("ok");
      await other.close();
    }
    await Promise.all([...strangers.map((s) => s.close()), b.close()]);
  });

  it("a majority whose first grant's lease ran out before the last grant came is no hold: fail expired, nothing left held", async () => {
    // Strangers hold k6 on lockserver-3..5 for 600 ms; b's leases of 300 ms on 1 and 2 run out before those servers grant it.
    const strangers = [2, 3, 4].map((i) => single(`s${i}`, i));
    await Promise.all(strangers.map((s) => s.acquire("k6", 600, 0)));
    const b = manager("b");
    expect(await b.acquire("k6", 300, 2000)).toEqual({ type: "fail", error: "expired" });
    const c = manager("c");
    expect((await c.acquire("k6", 1000, 0)).type).toBe("ok");
    await Promise.all([...strangers.map((s) => s.close()), b.close(), c.close()]);
  });

  it("--fence-source single: the next number of lockserver-1's counter, whichever servers granted", async () => {
    const a = manager("a", { fenceSource: "single" });
    // A stranger's grant on lockserver-1 alone takes its counter for k3 to 1.
    const s = single("s", 0);
    held(await s.acquire("k3", 1000, 0));
    const h = held(await a.acquire("k3", 3000, 100));
    // Granted by 2..5 (lockserver-1 was held), fenced by lockserver-1's counter: 2.
    expect(h.extra?.granted).not.toContain("lockserver-1");
    expect(h.fence).toBe(2);
    await a.release("k3", h);
    await Promise.all([a.close(), s.close()]);
  });

  it("two servers down: still a majority; a third down: refused, and single's counter gone is an unknown outcome", async () => {
    await cluster.kill("lockserver-4");
    await cluster.kill("lockserver-5");
    const a = manager("a");
    const h = held(await a.acquire("k4", 3000, 0));
    expect(h.extra?.granted).toEqual(["lockserver-1", "lockserver-2", "lockserver-3"]);
    await a.release("k4", h);
    await cluster.kill("lockserver-1");
    // A manager that knew lockserver-1 may write to it before it sees the connection close (in doubt); a new one finds three servers gone.
    const b = manager("b");
    expect(await b.acquire("k4", 3000, 0)).toEqual({ type: "fail", error: "unavailable" });
    await cluster.restart("lockserver-4");
    const s = manager("s", { fenceSource: "single" });
    const e = await s.acquire("k5", 3000, 0).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(UnknownOutcome);
    expect((e as UnknownOutcome).error).toBe("no-fence");
    await Promise.all([a.close(), b.close(), s.close()]);
  });
});
