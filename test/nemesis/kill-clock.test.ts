// The clock and kill nemeses end to end, through the CLI: a clock bump shows in
// the history's event and in the Redis node's own TIME, sampled from outside the
// run while it goes; kills are followed by restarts (by the timer or by the final
// heal) and leave no process behind; --redis-persistence reaches the node's
// config and its data directory. A backend without an ability is refused.
import { CLOCK, ensure } from "../../setup/index.ts";
import { describe, it, expect, beforeAll } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { parseArgs, BadInput } from "../../lib/index.ts";
import { TEST_OPTIONS, buildTest } from "../../runner/options.ts";
import { BACKENDS } from "../../backends/index.ts";
import type { Backend } from "../../core/index.ts";
import { tempRunDir, runCli, latestRun, readNdjson, processesMentioning } from "../helpers.ts";

// --keep-data: the tests look at the servers' files after the run.
const short = ["--concurrency", "4", "--workers", "2", "--work", "5", "--seed", "3", "--keep-data"];
type Event = { index: number; time: number; f: string; process: unknown; value: { targets: string[]; offset_ms?: number; mode?: string } };

function load(store: string) {
  const dir = latestRun(store);
  return {
    dir,
    nemesis: readNdjson(join(dir, "history.ndjson")).slice(1).filter((e) => e.process === "nemesis") as unknown as Event[],
  };
}

/** Each fault of `start` on a target is ended by one `end` on it, in order; none left open. */
function expectPaired(events: Event[], start: string, end: string): void {
  const open = new Map<string, number>();
  for (const e of events.filter((x) => x.f === start || x.f === end))
    for (const t of e.value.targets) {
      if (e.f === start) {
        expect(open.has(t), `${start} on ${t} at #${e.index} while one is in force`).toBe(false);
        open.set(t, e.index);
      } else {
        expect(open.has(t), `${end} on ${t} at #${e.index} without a ${start}`).toBe(true);
        open.delete(t);
      }
    }
  expect([...open.keys()]).toEqual([]);
}

beforeAll(async () => {
  // Moving a clock needs libfaketime and our malloc shim (built into the cache); vitest run directly skips `pretest`.
  await ensure([CLOCK]);
}, 300_000);

describe("clock nemesis", () => {
  it("a bump shows in the history's event and in the node's TIME; every clock is reset by the end", async () => {
    const store = tempRunDir("fc-clock-");
    const cli = runCli("test", [...short, "--nemesis", "clock", "--clock-modes", "bump", "--clock-offset", "20000", "--nemesis-interval", "0.3", "--fault-min", "1500", "--fault-max", "1500", "--time-limit", "3", "--store", store]);
    // Sample the node's wall clock from outside the run, as an operator would.
    const skews: number[] = [];
    let exited = false;
    const exit = cli.exit.then((code) => ((exited = true), code));
    let redis: Redis | null = null;
    while (!exited) {
      if (!redis) {
        let servers: Array<{ host: string; port: number }> | undefined;
        try {
          servers = JSON.parse(readFileSync(join(latestRun(store), "run.json"), "utf8")).servers;
        } catch {
          // not written yet, or caught mid-rewrite: look again
        }
        if (servers) {
          redis = new Redis({ host: servers[0].host, port: servers[0].port, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
          // The run's teardown closes the connection under us.
          redis.on("error", () => {});
        }
      } else if (redis.status === "ready") {
        try {
          const before = Date.now();
          const [s, us] = await redis.time();
          skews.push(Number(s) * 1000 + Number(us) / 1000 - (before + Date.now()) / 2);
        } catch {
          // the run is stopping
        }
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    redis?.disconnect();
    expect([0, 1], cli.stderr()).toContain(await exit);

    const { dir, nemesis } = load(store);
    const bumps = nemesis.filter((e) => e.f === "bump-clock");
    expect(bumps.length).toBeGreaterThan(0);
    for (const b of bumps) expect(b.value).toMatchObject({ mode: "bump", targets: ["redis-1"] });
    expect(bumps.every((b) => Math.abs(b.value.offset_ms!) === 20_000)).toBe(true);
    expectPaired(nemesis, "bump-clock", "reset-clock");
    // Seen from outside: the node's TIME stood at one of the recorded offsets at some point, and at zero at others.
    const offsets = new Set(bumps.map((b) => b.value.offset_ms!));
    expect(skews.some((s) => [...offsets].some((o) => Math.abs(s - o) < 1000)), `skews seen: ${skews.map(Math.round).join(" ")}`).toBe(true);
    expect(skews.some((s) => Math.abs(s) < 1000)).toBe(true);
    expect(readFileSync(join(dir, "data", "redis-1", "faketime"), "utf8").trim()).toBe("+0.000");
    expect(processesMentioning(store)).toEqual([]);
  });
});

describe("kill nemesis", () => {
  it("kills are followed by restarts after --restart-delay, the AOF of --redis-persistence always is there, and nothing is left running", async () => {
    const store = tempRunDir("fc-kill-");
    const cli = runCli("test", [...short, "--nemesis", "kill", "--restart-delay", "300", "--redis-persistence", "always", "--nemesis-interval", "0.5", "--time-limit", "4", "--store", store]);
    expect([0, 1], cli.stderr()).toContain(await cli.exit);
    const { dir, nemesis } = load(store);
    const kills = nemesis.filter((e) => e.f === "kill");
    expect(kills.length).toBeGreaterThan(1);
    expectPaired(nemesis, "kill", "restart");
    // The restart waits for the delay (and for PING): no sooner than 300 ms after its
    // kill, except the last one, which the final heal may have restarted early.
    for (const k of kills.slice(0, -1)) {
      const r = nemesis.find((e) => e.f === "restart" && e.index > k.index)!;
      expect(r.time - k.time).toBeGreaterThanOrEqual(290e6);
    }
    expect(readFileSync(join(dir, "data", "redis-1", "redis.conf"), "utf8")).toMatch(/appendonly yes\nappendfsync always/);
    expect(existsSync(join(dir, "data", "redis-1", "appendonlydir", "appendonly.aof.manifest"))).toBe(true);
    // Each restart is a new server in the same log.
    const starts = readFileSync(join(dir, "logs", "redis-1.log"), "utf8").match(/Ready to accept connections/g) ?? [];
    expect(starts.length).toBe(kills.length + 1);
    expect(processesMentioning(store)).toEqual([]);
  });

  it("the final heal restarts a node whose restart delay outlasts the run; without persistence it has no AOF", async () => {
    const store = tempRunDir("fc-kill-");
    const cli = runCli("test", [...short, "--nemesis", "kill", "--restart-delay", "60000", "--nemesis-interval", "0.5", "--time-limit", "2", "--command-timeout", "500", "--store", store]);
    expect([0, 1, 2], cli.stderr()).toContain(await cli.exit);
    const { dir, nemesis } = load(store);
    expect(nemesis.map((e) => e.f)).toEqual(["kill", "restart"]);
    expect(nemesis[1].time - nemesis[0].time).toBeLessThan(10e9);
    expect(readFileSync(join(dir, "data", "redis-1", "redis.conf"), "utf8")).toMatch(/appendonly no/);
    expect(existsSync(join(dir, "data", "redis-1", "appendonlydir"))).toBe(false);
    expect(processesMentioning(store)).toEqual([]);
  });
});

describe("backends without an ability", () => {
  it("--backend etcd --nemesis clock is bad input: libfaketime cannot move Go's clock; nothing is stored", async () => {
    const store = tempRunDir("fc-etcd-clock-");
    const cli = runCli("test", ["--backend", "etcd", "--nemesis", "clock", "--store", store]);
    expect(await cli.exit).toBe(254);
    expect(cli.stderr()).toMatch(/--nemesis clock does not work with --backend etcd: libfaketime cannot move etcd's clock/);
    expect(existsSync(latestRun(store))).toBe(false);
  });

  // A stand-in entry shows the refusal any backend gets for either ability.
  it("refuse the nemesis that needs it, saying why", () => {
    // The registry is a constant to the compiler; a test may add an entry for a while.
    const registry = BACKENDS as Record<string, Backend>;
    const lacking: Backend = { ...BACKENDS.redis, name: "no-clock", abilities: ["kill"], lacks: { clock: "its clock is read without libc" } };
    registry["no-clock"] = lacking;
    try {
      // The --backend choices were fixed when the options were declared: set it after parsing.
      const build = (args: string[], backend = "redis") => buildTest({ ...parseArgs(args, TEST_OPTIONS).options, backend });
      expect(() => build(["--nemesis", "pause,clock"], "no-clock")).toThrow(BadInput);
      expect(() => build(["--nemesis", "clock"], "no-clock")).toThrow("--nemesis clock does not work with --backend no-clock: its clock is read without libc");
      expect(build(["--nemesis", "kill,pause"], "no-clock").serverOptions.skewableClocks).toBe(false);
      registry["no-clock"] = { ...lacking, abilities: [] };
      expect(() => build(["--nemesis", "kill"], "no-clock")).toThrow(/^--nemesis kill does not work with --backend no-clock: its servers cannot be killed/);
      // Only a run that may skew clocks pays for libfaketime.
      expect(build(["--nemesis", "clock,pause"]).serverOptions).toMatchObject({ skewableClocks: true, deploy: "local" });
      expect(build(["--redis-persistence", "everysec"]).serverOptions).toMatchObject({ skewableClocks: false, deploy: "local" });
      expect(build(["--redis-persistence", "everysec"]).backendOptions).toEqual({ "redis-persistence": "everysec", "release-gap": undefined });
    } finally {
      delete registry["no-clock"];
    }
  });
});
