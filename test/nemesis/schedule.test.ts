// The random schedule's final heal, on the kill nemesis with a hand-made cluster
// whose SIGKILL takes a while (pure scheduling logic: the real kill is tested in
// kill-clock.test.ts). A kill still going out when the time limit comes must be
// healed too: the heal waits for it, so the history closes with its restart and
// nothing restarts a server after the heal has returned (the teardown follows).
import { describe, it, expect } from "vitest";
import { FIRST_GAP, NemesisSchedule, nemesisRounds } from "../../nemesis/schedule.ts";
import { killNemesis } from "../../nemesis/kill.ts";
import { pauseNemesis } from "../../nemesis/pause.ts";
import type { Nemesis, NemesisContext, NemesisOptions } from "../../nemesis/nemesis.ts";
import { rng, sleep } from "../../lib/index.ts";
import { nemesisInterval } from "../../runner/options.ts";

/** The run clock of these schedules, in ns. */
const ns = () => Number(process.hrtime.bigint());

describe("NemesisSchedule.healAll", () => {
  it("waits for a kill under way, then restarts its server before it returns", async () => {
    const events: string[] = [];
    let killing = false;
    const cluster = {
      kill: async (name: string) => {
        killing = true;
        events.push(`kill-begun ${name}`);
        await sleep(300);
        events.push(`kill-done ${name}`);
      },
      restart: async (name: string) => {
        events.push(`restart ${name}`);
      },
    };
    const options = { intervalS: 0.02, aim: "random", restartDelayMs: 60_000 } as unknown as NemesisOptions;
    const ctx = {
      rng: rng(1, "schedule-test"),
      workers: ["worker-1"],
      holds: () => [],
      servers: ["redis-1"],
      links: null,
      cluster,
      options,
      record: (f: string, value: Record<string, unknown>) => events.push(`record ${f} ${(value.targets as string[]).join(",")}`),
    } as unknown as NemesisContext;
    const schedule = new NemesisSchedule([killNemesis()], ctx, ns, (line) => events.push(`warn ${line}`));
    schedule.start(ns(), Infinity);
    const deadline = Date.now() + 5000;
    while (!killing && Date.now() < deadline) await sleep(5);
    expect(killing).toBe(true);
    // The time limit comes while the SIGKILL is still going out.
    await schedule.healAll();
    const atHeal = [...events];
    expect(atHeal).toEqual(["kill-begun redis-1", "kill-done redis-1", "record kill redis-1", "restart redis-1", "record restart redis-1"]);
    expect(schedule.active()).toEqual([]);
    // And nothing more happens after the heal returned.
    await sleep(200);
    expect(events).toEqual(atHeal);
  });

  it("a pause still waiting for a holder when the time limit comes never starts: the schedule says it is stopping", async () => {
    const events: string[] = [];
    let choosing = false;
    const processes = {
      pause: (name: string) => (events.push(`pause ${name}`), true),
      resume: (name: string) => void events.push(`resume ${name}`),
      running: () => true,
    };
    const options = { intervalS: 1, aim: "holder", pauseMinMs: 100, pauseMaxMs: 200 } as unknown as NemesisOptions;
    const ctx = {
      rng: rng(2, "schedule-test"),
      workers: ["worker-1", "worker-2"],
      // Nobody holds a lock: the pause waits for a holder (half an interval), polling this.
      holds: () => ((choosing = true), []),
      servers: [],
      links: null,
      cluster: {},
      processes,
      options,
      record: (f: string) => events.push(`record ${f}`),
    } as unknown as NemesisContext;
    const schedule = new NemesisSchedule([pauseNemesis("pause", "workers", (c) => c.workers, true)], ctx, ns, (line) => events.push(`warn ${line}`));
    schedule.start(ns(), Infinity);
    const deadline = Date.now() + 5000;
    while (!choosing && Date.now() < deadline) await sleep(5);
    expect(choosing).toBe(true);
    // The time limit comes while it waits; the heal waits for the turn to end.
    await schedule.healAll();
    await sleep(100);
    expect(events).toEqual([]);
  });
});

describe("faults too late to matter", () => {
  it("starts no fault that could not last a lease before the final heal", async () => {
    const starts: number[] = [];
    const processes = { pause: () => true, resume: () => {}, running: () => true };
    const options = { intervalS: 0.05, leaseMs: 300, aim: "holder", pauseMinMs: 20, pauseMaxMs: 40 } as unknown as NemesisOptions;
    const t0 = ns();
    const ctx = {
      rng: rng(3, "schedule-test"),
      workers: ["worker-1", "worker-2", "worker-3"],
      holds: () => [{ worker: "worker-1", granted: null }],
      servers: [],
      links: null,
      cluster: {},
      processes,
      options,
      record: (f: string) => f === "start-pause" && starts.push((ns() - t0) / 1e6),
    } as unknown as NemesisContext;
    const schedule = new NemesisSchedule([pauseNemesis("pause", "workers", (c) => c.workers, true)], ctx, ns, () => {});
    // The final heal 800 ms from now: pauses for the first 500 ms, none in the last 300 (a lease).
    schedule.start(t0, t0 + 800e6);
    await sleep(1000);
    await schedule.healAll();
    expect(starts.length).toBeGreaterThan(3);
    expect(Math.max(...starts)).toBeLessThan(520);
  });

  it("kills one at a time: no kill while a server of the last one is still down", async () => {
    const events: string[] = [];
    const cluster = { kill: async () => {}, restart: async () => {} };
    const options = { intervalS: 0.02, leaseMs: 100, aim: "random", restartDelayMs: 150 } as unknown as NemesisOptions;
    const ctx = {
      rng: rng(4, "schedule-test"),
      workers: ["worker-1"],
      holds: () => [],
      servers: ["zk-1", "zk-2", "zk-3"],
      links: null,
      cluster,
      options,
      record: (f: string) => events.push(f),
    } as unknown as NemesisContext;
    const schedule = new NemesisSchedule([killNemesis()], ctx, ns, () => {});
    schedule.start(ns(), Infinity);
    await sleep(1000);
    await schedule.healAll();
    // Gaps of 10-30 ms against restarts after 150 ms: without the rule, kills pile up on all three.
    expect(events.filter((e) => e === "kill").length).toBeGreaterThan(3);
    for (let i = 0; i < events.length; i++) expect(events[i], events.join(" ")).toBe(i % 2 === 0 ? "kill" : "restart");
  });

  it("the default gap between faults follows a short run's time limit", () => {
    expect(nemesisInterval(30)).toBe(2);
    expect(nemesisInterval(300)).toBe(2);
    expect(nemesisInterval(10)).toBeCloseTo(0.667, 3);
    expect(nemesisInterval(20)).toBeCloseTo(1.333, 3);
    expect(nemesisInterval(3)).toBe(0.5);
  });
});

/** A nemesis whose every turn is noted (when, and whether it found something to do); it starts a fault when `fits` says so. */
function toy(name: string, fits: () => boolean, turns: Array<{ name: string; ms: number; started: boolean }>, t0: number): Nemesis {
  return {
    name,
    describe: name,
    async inject() {
      const started = fits();
      turns.push({ name, ms: Date.now() - t0, started });
      return started;
    },
    perform: async () => {},
    heal: async () => {},
    active: () => [],
  };
}

function toyContext(intervalS: number, seed: number): NemesisContext {
  return { rng: rng(seed, "schedule-test"), options: { intervalS } as NemesisOptions, record: () => {} } as unknown as NemesisContext;
}

describe("the random schedule's order and pace", () => {
  it("draws nemeses in rounds: every nemesis once per round, in an order that varies", () => {
    const names = ["partition", "pause", "kill"].map((n) => ({ name: n }) as Nemesis);
    const next = nemesisRounds(rng(7, "rounds"), names);
    const drawn = Array.from({ length: 30 }, () => next().name);
    const rounds = Array.from({ length: 10 }, (_, i) => drawn.slice(3 * i, 3 * i + 3));
    for (const r of rounds) expect([...r].sort()).toEqual(["kill", "partition", "pause"]);
    // Random, not a fixed cycle: the rounds are not all in one order.
    expect(new Set(rounds.map((r) => r.join())).size).toBeGreaterThan(1);
  });

  it("starts the first fault within half an interval, not after a whole one", async () => {
    const turns: Array<{ name: string; ms: number; started: boolean }> = [];
    const t0 = Date.now();
    // A 4 s interval: the first gap is 0.4 to 2 s; any later gap (and the first, as it was) at least 2 s.
    const schedule = new NemesisSchedule([toy("pause", () => true, turns, t0)], toyContext(4, 3), ns);
    schedule.start(ns(), Infinity);
    const deadline = Date.now() + 5000;
    while (turns.length === 0 && Date.now() < deadline) await sleep(5);
    await schedule.healAll();
    expect(turns.length).toBe(1);
    expect(turns[0].ms).toBeGreaterThanOrEqual(FIRST_GAP[0] * 4000 - 5);
    expect(turns[0].ms).toBeLessThan(FIRST_GAP[1] * 4000);
  });

  it("a nemesis with nothing to do passes its turn to the next of the round at once, not after a gap", async () => {
    const turns: Array<{ name: string; ms: number; started: boolean }> = [];
    const t0 = Date.now();
    // The partition is always still in force. A gap is at least 0.5 x 0.4 s = 200 ms.
    const schedule = new NemesisSchedule([toy("partition", () => false, turns, t0), toy("pause", () => true, turns, t0)], toyContext(0.4, 5), ns);
    schedule.start(ns(), Infinity);
    await sleep(2500);
    await schedule.healAll();
    const passed = turns.filter((t) => t.name === "partition");
    expect(passed.length).toBeGreaterThanOrEqual(2);
    // Each passed turn is followed by the pause's, within a moment; had the partition's turn used up its gap, 200 ms or more later.
    for (const p of passed) {
      const after = turns[turns.indexOf(p) + 1];
      if (after === undefined) continue;
      expect(after.name).toBe("pause");
      expect(after.ms - p.ms).toBeLessThan(100);
    }
  });
});
