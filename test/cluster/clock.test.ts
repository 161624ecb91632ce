// Redis nodes with the cluster abilities the clock and kill nemeses use, on real
// redis-server processes: a skewed clock moves TIME and expires keys early (K3's
// mechanism); a killed node comes back on its port, remembering what its
// persistence kept.
import { CLOCK, ensure } from "../../setup/index.ts";
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { Redis } from "ioredis";
import { ProcessGroup } from "../../cluster/processes.ts";
import { PortPlan } from "../../cluster/ports.ts";
import { startRedisCluster } from "../../backends/redis/servers.ts";
import { clockOffsetFile } from "../../backends/redis/server.ts";
import { faketimeEnv, formatOffset, writeOffset } from "../../cluster/faketime.ts";
import type { Cluster } from "../../cluster/cluster.ts";
import { tempRunDir, processesMentioning } from "../helpers.ts";

const groups: Array<{ group: ProcessGroup; dir: string }> = [];
const conns: Redis[] = [];

async function start(count: number, opts: { skewableClock?: boolean; persistence?: "none" | "always" }): Promise<{ cluster: Cluster; dir: string }> {
  const dir = tempRunDir("fc-clock-");
  const group = new ProcessGroup(dir);
  groups.push({ group, dir });
  return { cluster: await startRedisCluster(group, new PortPlan(0), count, { runDir: dir, ...opts }), dir };
}

function connect(c: Cluster, i = 0): Redis {
  const r = new Redis({ host: c.nodes[i].host, port: c.nodes[i].port, maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
  conns.push(r);
  return r;
}

/** Redis' wall clock in ms, and our own at the same moment (the middle of the round trip). */
async function skewOf(r: Redis): Promise<number> {
  const before = Date.now();
  const [s, us] = await r.time();
  const after = Date.now();
  return Number(s) * 1000 + Number(us) / 1000 - (before + after) / 2;
}

beforeAll(async () => {
  // Moving a clock needs libfaketime and our malloc shim (built into the cache); vitest run directly skips `pretest`.
  await ensure([CLOCK]);
}, 300_000);

afterAll(async () => {
  for (const r of conns) r.disconnect();
  for (const { group, dir } of groups) {
    await group.stopAll();
    expect(processesMentioning(dir)).toEqual([]);
  }
});

describe("libfaketime offsets", () => {
  it("are seconds with a fraction and never a unit suffix (libfaketime reads any 'm' as minutes)", () => {
    expect(formatOffset(20_000)).toBe("+20.000");
    expect(formatOffset(-3500)).toBe("-3.500");
    expect(formatOffset(1500)).toBe("+1.500");
    expect(formatOffset(0)).toBe("+0.000");
    expect(formatOffset(-0.4)).toBe("+0.000");
    expect(() => formatOffset(NaN)).toThrow(/finite/);
  });
});

describe("a program under libfaketime with the monotonic clock left real", () => {
  // libfaketime 0.9.10 mistranslates both, even with DONT_FAKE_MONOTONIC (the sleep
  // fails with EINVAL, the wait times out at once): the shim sends them to glibc.
  it("sleeps to a monotonic deadline and waits on a monotonic condvar for real time, while its wall clock is a minute back", () => {
    const dir = tempRunDir("fc-clock-waits-");
    const program = join(dir, "monotonic-waits");
    const gcc = spawnSync("gcc", ["-O2", "-o", program, join(import.meta.dirname, "fixtures/monotonic-waits.c"), "-lpthread"], { encoding: "utf8" });
    expect(gcc.status, gcc.stderr).toBe(0);
    const offsetFile = join(dir, "faketime");
    writeOffset(offsetFile, -60_000);
    const run = spawnSync(program, { env: faketimeEnv(offsetFile), encoding: "utf8", timeout: 10_000 });
    expect(run.status, run.stderr).toBe(0);
    const [sleep, wait, skew] = run.stdout.trim().split("\n").map((l) => l.split(" "));
    expect(sleep[1]).toBe("0");
    expect(wait[1]).toBe("ETIMEDOUT");
    for (const ms of [Number(sleep[2]), Number(wait[2])]) {
      expect(ms).toBeGreaterThanOrEqual(99);
      expect(ms).toBeLessThan(1000);
    }
    expect(Math.abs(Number(skew[1]) + 60_000)).toBeLessThan(100);
  });
});

describe("a Redis node with a skewable clock", () => {
  it("TIME jumps by the offset, a 10 s key expires at once after +20 s, and a reset puts TIME back", async () => {
    const { cluster, dir } = await start(1, { skewableClock: true });
    expect(cluster.skewClock).toBeTypeOf("function");
    const r = connect(cluster);
    await r.connect();
    expect(Math.abs(await skewOf(r))).toBeLessThan(1000);
    expect(readFileSync(clockOffsetFile(dir, "redis-1"), "utf8").trim()).toBe("+0.000");

    await r.set("k", "v", "EX", 10);
    await cluster.skewClock!("redis-1", 20_000);
    expect(readFileSync(clockOffsetFile(dir, "redis-1"), "utf8").trim()).toBe("+20.000");
    expect(Math.abs((await skewOf(r)) - 20_000)).toBeLessThan(1000);
    expect(await r.get("k")).toBeNull();

    // Backwards, by less than a second's worth of ms units: 1500 ms, not 1500 minutes.
    await cluster.skewClock!("redis-1", -1500);
    expect(Math.abs((await skewOf(r)) + 1500)).toBeLessThan(1000);

    await r.set("k2", "v", "EX", 10);
    await cluster.skewClock!("redis-1", 0);
    expect(Math.abs(await skewOf(r))).toBeLessThan(1000);
    expect(await r.get("k2")).toBe("v");
  });

  it("a node without the ability is a plain redis-server: no skewClock, no libfaketime", async () => {
    const { cluster, dir } = await start(1, {});
    expect(cluster.skewClock).toBeUndefined();
    expect(existsSync(clockOffsetFile(dir, "redis-1"))).toBe(false);
    const r = connect(cluster);
    await r.connect();
    expect(Math.abs(await skewOf(r))).toBeLessThan(1000);
  });
});

describe("kill and restart", () => {
  it("a killed node refuses connections, comes back on its port, and without persistence has forgotten its keys", async () => {
    const { cluster } = await start(2, { skewableClock: true });
    const [a, b] = [connect(cluster, 0), connect(cluster, 1)];
    await a.connect();
    await b.connect();
    await a.set("k", "v");
    await b.set("k", "v");
    await cluster.skewClock!("redis-1", 5000);
    await cluster.kill!("redis-1");
    await expect(a.ping()).rejects.toThrow();
    expect(await b.get("k")).toBe("v");

    await cluster.restart!("redis-1");
    const again = connect(cluster, 0);
    await again.connect();
    expect(await again.get("k")).toBeNull();
    // Its machine's clock stayed where the nemesis put it.
    expect(Math.abs((await skewOf(again)) - 5000)).toBeLessThan(1000);
    // Restarting a node that is up changes nothing.
    await cluster.restart!("redis-2");
    expect(await b.get("k")).toBe("v");
  });

  it("with appendfsync always a killed node comes back with its keys, from its AOF", async () => {
    const { cluster, dir } = await start(1, { persistence: "always" });
    const r = connect(cluster);
    await r.connect();
    await r.set("k", "kept", "PX", 60_000);
    await cluster.kill!("redis-1");
    expect(existsSync(join(dir, "data", "redis-1", "appendonlydir"))).toBe(true);
    await cluster.restart!("redis-1");
    const again = connect(cluster);
    await again.connect();
    expect(await again.get("k")).toBe("kept");
    expect(await again.pttl("k")).toBeGreaterThan(50_000);
  });
});
