// The random schedule's final heal, on the kill nemesis with a hand-made cluster
// whose SIGKILL takes a while (pure scheduling logic: the real kill is tested in
// kill-clock.test.ts). A kill still going out when the time limit comes must be
// healed too: the heal waits for it, so the history closes with its restart and
// nothing restarts a server after the heal has returned (the teardown follows).
import { describe, it, expect } from "vitest";
import { NemesisSchedule } from "../../nemesis/schedule.ts";
import { killNemesis } from "../../nemesis/kill.ts";
import { pauseNemesis } from "../../nemesis/pause.ts";
import type { NemesisContext, NemesisOptions } from "../../nemesis/nemesis.ts";
import { rng, sleep } from "../../lib/index.ts";

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
    const schedule = new NemesisSchedule([killNemesis()], ctx, (line) => events.push(`warn ${line}`));
    schedule.start();
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
    const schedule = new NemesisSchedule([pauseNemesis("pause", "workers", (c) => c.workers, true)], ctx, (line) => events.push(`warn ${line}`));
    schedule.start();
    const deadline = Date.now() + 5000;
    while (!choosing && Date.now() < deadline) await sleep(5);
    expect(choosing).toBe(true);
    // The time limit comes while it waits; the heal waits for the turn to end.
    await schedule.healAll();
    await sleep(100);
    expect(events).toEqual([]);
  });
});
