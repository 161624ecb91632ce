// --clock-target clients without processes: which backends take it and what the
// Test then starts (workers under libfaketime, servers without), the clock
// nemesis aimed at a holder's worker through a context that notes the moves, a
// script naming a worker, and the refusals (an adapter program whose manifest
// would hide the preload, a target with no clock nemesis).
import { describe, it, expect } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { clockNemesis } from "../../nemesis/clock.ts";
import { NEMESES, ScriptSchedule, type HeldLock, type NemesisContext, type NemesisOptions } from "../../nemesis/index.ts";
import { buildScenario, scriptOf, type Scenario } from "../../scenarios/index.ts";
import { TEST_OPTIONS, buildTest } from "../../runner/options.ts";
import { preflight } from "../../runner/preflight.ts";
import { requirementsOf as requirements } from "../../runner/needs.ts";

const requirementsOf = (test: Parameters<typeof requirements>[0]): string[] => requirements(test).map((r) => r.id);
import { BadInput, parseArgs, rng } from "../../lib/index.ts";
import { tempRunDir } from "../helpers.ts";

const build = (args: string[]) => buildTest(parseArgs(args, TEST_OPTIONS).options);
const clients = ["--nemesis", "clock", "--clock-target", "clients"];

describe("--clock-target", () => {
  it("clients: any backend, its workers under libfaketime and its servers not", () => {
    for (const backend of ["redis", "redlock", "etcd", "zookeeper", "postgres"]) {
      const test = build(["--backend", backend, ...clients]);
      expect(test.workerClocks, backend).toBe(true);
      expect(test.serverOptions.skewableClocks, backend).toBe(false);
      expect(test.nemesisOptions.clockTarget).toBe("clients");
      // The workers run here whatever --deploy says: the run needs libfaketime here.
      expect(requirementsOf(test)).toContain("clock");
    }
    expect(requirementsOf(build(["--backend", "redis", ...clients, "--deploy", "docker"]))).toContain("clock");
    // The clients' clocks of a cluster of yours can be moved; its servers' cannot.
    expect(build(["--deploy", "external", "--endpoints", "127.0.0.1:6379", ...clients]).workerClocks).toBe(true);
    expect(() => build(["--deploy", "external", "--endpoints", "127.0.0.1:6379", "--nemesis", "clock"])).toThrow(/cannot move the clocks of an external cluster's servers \(--clock-target clients/);
  });

  it("servers (the default) is the backend's ability, refused where it lacks it; the workers keep real clocks", () => {
    const servers = build(["--backend", "redlock", "--nemesis", "clock"]);
    expect(servers.workerClocks).toBeUndefined();
    expect(servers.serverOptions.skewableClocks).toBe(true);
    expect(servers.nemesisOptions.clockTarget).toBe("servers");
    expect(() => build(["--backend", "etcd", "--nemesis", "clock", "--clock-target", "servers"])).toThrow(/--nemesis clock does not work with --backend etcd: libfaketime cannot move etcd's clock/);
    expect(build(["--nemesis", "pause"]).workerClocks).toBeUndefined();
  });

  it("without a clock nemesis, or with a target it does not know, is bad input", () => {
    expect(() => build(["--clock-target", "clients"])).toThrow(BadInput);
    expect(() => build(["--nemesis", "pause", "--clock-target", "clients"])).toThrow("--clock-target clients says whose clocks --nemesis clock moves, and this run has no clock nemesis (--nemesis pause)");
    expect(() => build(["--nemesis", "clock", "--clock-target", "both"])).toThrow('--clock-target: unknown value "both"; choose from servers, clients');
  });

  it("an adapter program whose manifest sets the preload's variables is refused before it starts", async () => {
    const dir = tempRunDir("fc-program-clock-");
    const manifest = join(dir, "own.adapter.json");
    writeFileSync(manifest, JSON.stringify({ protocol: 1, describe: "a program of its own", command: ["python3", "lock.py"], backends: ["redis"], fences: true, renew: "explicit", env: { LD_PRELOAD: "/opt/mine.so" } }));
    const test = build(["--client", manifest, ...clients]);
    await expect(preflight(test)).rejects.toThrow(/--clock-target clients moves the clocks of --client .*own\.adapter\.json's programs through the environment they inherit .* its "env" sets LD_PRELOAD/);
  });
});

const options: NemesisOptions = {
  intervalS: 1, leaseMs: 1000, pauseMinMs: 500, pauseMaxMs: 4000, aim: "holder", faultMinMs: 1000, faultMaxMs: 1000, grudges: [],
  partitionMode: "timeout", latencyMs: 1200, jitterMs: 150, clockOffsetMs: 60_000, clockModes: ["bump"], strobePeriodMs: 100, restartDelayMs: 1000, clockTarget: "clients",
};

/** A context whose workers' clocks note their moves; its servers' clocks cannot be moved. */
function context(seed: number, holds: HeldLock[], o: Partial<NemesisOptions> = {}) {
  const moves: string[] = [];
  const events: Array<{ f: string; value: Record<string, unknown> }> = [];
  const ctx = {
    rng: rng(seed),
    workers: ["worker-1", "worker-2", "worker-3"],
    servers: ["redis-1"],
    holds: () => holds,
    options: { ...options, ...o },
    cluster: {},
    skewWorkerClock: async (w: string, ms: number) => void moves.push(`${w} ${ms}`),
    record: (f: string, value: Record<string, unknown>) => void events.push({ f, value }),
  } as unknown as NemesisContext;
  return { ctx, moves, events };
}

describe("the clock nemesis on the clients' workers", () => {
  it("aims at a holder's worker, either way by --clock-offset, and the final heal puts it back", async () => {
    const signs = new Set<number>();
    for (let seed = 0; seed < 20; seed++) {
      const { ctx, moves, events } = context(seed, [{ worker: "worker-2", granted: null }]);
      const nemesis = clockNemesis();
      await nemesis.inject(ctx);
      expect(moves).toHaveLength(1);
      const [worker, ms] = moves[0].split(" ");
      expect(worker).toBe("worker-2");
      expect(Math.abs(Number(ms))).toBe(60_000);
      signs.add(Math.sign(Number(ms)));
      expect(events).toEqual([{ f: "bump-clock", value: { mode: "bump", targets: ["worker-2"], offset_ms: Number(ms), aim: "holder", holder: "worker-2", duration_ms: 1000 } }]);
      expect(nemesis.active()).toEqual([`clock worker-2 bump ${Number(ms) > 0 ? "+" : ""}${ms} ms`]);
      await nemesis.heal(ctx);
      expect(moves[1]).toBe("worker-2 0");
      expect(events[1]).toEqual({ f: "reset-clock", value: { targets: ["worker-2"] } });
    }
    expect([...signs].sort()).toEqual([-1, 1]);
  });

  it("performs a fault on a worker, not on a server; without workers under libfaketime it says why", async () => {
    const { ctx, moves } = context(1, []);
    const nemesis = clockNemesis();
    await expect(nemesis.perform(ctx, { targets: ["redis-1"], offsetMs: 5000, durationMs: null })).rejects.toThrow("clock: no worker named redis-1 (workers: worker-1, worker-2, worker-3)");
    await nemesis.perform(ctx, { targets: ["worker-3"], offsetMs: -5000, durationMs: null });
    expect(moves).toEqual(["worker-3 -5000"]);
    await nemesis.heal(ctx);
    const bare = { ...ctx, skewWorkerClock: undefined } as NemesisContext;
    await expect(clockNemesis().perform(bare, { targets: ["worker-1"], offsetMs: 5000, durationMs: null })).rejects.toThrow("this run's workers were not started under libfaketime (--clock-target clients)");
  });

  it("a script names a worker as the clock fault's target with --clock-target clients, and a server otherwise", async () => {
    const step = { atMs: 0, nemesis: "clock", fault: { targets: ["worker-1"], mode: "bump" as const, offsetMs: 9000, durationMs: null } };
    const { ctx, moves } = context(1, []);
    const script = new ScriptSchedule([step], NEMESES, ctx, () => 0);
    await script.prepare();
    expect(moves).toEqual(["worker-1 9000"]);
    await script.healAll();
    expect(moves).toEqual(["worker-1 9000", "worker-1 0"]);
    const servers = context(1, [], { clockTarget: "servers" }).ctx;
    await expect(new ScriptSchedule([step], NEMESES, servers, () => 0).prepare()).rejects.toThrow("script: clock at 0 ms names worker-1, which this run does not have (its servers: redis-1)");
  });

  it("a scenario that jumps a worker's clock builds into a test whose workers run under libfaketime", () => {
    const scenario: Scenario = {
      id: "X1",
      title: "a client's clock jumps",
      shows: "",
      options: { backend: "redis", "clock-target": "clients" },
      varies: {},
      script: () => [{ atMs: 500, nemesis: "clock", fault: { targets: ["worker-1"], mode: "bump", offsetMs: 9000, durationMs: 2000 } }],
      predict: () => ({ anomalies: null, why: "" }),
    };
    const { test } = buildScenario(scenario, []);
    expect(test.workerClocks).toBe(true);
    expect(test.serverOptions.skewableClocks).toBe(false);
    expect(test.script).toEqual(scriptOf(scenario, {}));
  });
});
