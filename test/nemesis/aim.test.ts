// Aiming is pure choice: from a known state of holds, each nemesis must pick a
// target that can matter. The kill and clock nemeses are driven through `inject`
// with a cluster that only notes what it was asked to do (what is under test is
// the choice, not the servers: the catalogue's K3/K4 tests do that for real).
import { describe, it, expect } from "vitest";
import { aimServers, aimedWorkers, holderAmong, othersOver, tooLate, workerAim } from "../../nemesis/aim.ts";
import { pickTarget, pauseNemesis } from "../../nemesis/pause.ts";
import { partitionNemesis } from "../../nemesis/partition.ts";
import { killNemesis } from "../../nemesis/kill.ts";
import { clockNemesis } from "../../nemesis/clock.ts";
import { grudge, EXILING } from "../../nemesis/grudges.ts";
import { slowWorkers, latencyNemesis } from "../../nemesis/latency.ts";
import { aimSentence } from "../../reports/faults.ts";
import { HoldTracker } from "../../runner/holders.ts";
import { parseArgs, rng, BadInput } from "../../lib/index.ts";
import { buildTest, TEST_OPTIONS } from "../../runner/options.ts";
import type { Aim, HeldLock, NemesisContext, NemesisOptions } from "../../nemesis/index.ts";

const five = ["redis-1", "redis-2", "redis-3", "redis-4", "redis-5"];
const workers = ["worker-1", "worker-2", "worker-3"];
const bare: HeldLock = { worker: "worker-2", granted: ["redis-2", "redis-4", "redis-5"] };
const all: HeldLock = { worker: "worker-3", granted: [...five] };

const options = (aim: Aim): NemesisOptions => ({
  intervalS: 1, leaseMs: 1000, pauseMinMs: 500, pauseMaxMs: 4000, aim, faultMinMs: 1000, faultMaxMs: 5000, grudges: [...EXILING],
  partitionMode: "timeout", latencyMs: 1200, jitterMs: 150, clockOffsetMs: 2000, clockModes: ["bump"], strobePeriodMs: 100, restartDelayMs: 1000,
});

/** A context whose cluster notes the kills, restarts and clock moves asked of it. */
function context(seed: number, aim: Aim, holds: HeldLock[], servers = five) {
  const done: string[] = [];
  const events: Array<{ f: string; value: Record<string, unknown> }> = [];
  const ctx = {
    rng: rng(seed),
    workers,
    servers,
    holds: () => holds,
    options: options(aim),
    cluster: {
      kill: async (s: string) => void done.push(`kill ${s}`),
      restart: async (s: string) => void done.push(`restart ${s}`),
      skewClock: async (s: string, ms: number) => void done.push(`clock ${s} ${ms}`),
    },
    record: (f: string, value: Record<string, unknown>) => void events.push({ f, value }),
  } as unknown as NemesisContext;
  return { ctx, done, events };
}

describe("aimServers: a node that granted a hold held now", () => {
  it("picks only among the granting nodes, and over seeds every one of them", () => {
    const seen = new Set<string>();
    for (let seed = 0; seed < 100; seed++) {
      const a = aimServers(rng(seed), "holder", [bare], five, five)!;
      expect(a.targets).toHaveLength(1);
      expect(bare.granted).toContain(a.targets[0]);
      expect(a.aim).toEqual({ aim: "holder", holder: "worker-2", granted: bare.granted });
      seen.add(a.targets[0]);
    }
    expect([...seen].sort()).toEqual(bare.granted);
  });

  it("breaking the majority takes enough granting nodes: one of a bare majority, three of all five", () => {
    for (let seed = 0; seed < 50; seed++) {
      expect(aimServers(rng(seed), "holder", [bare], five, five, true)!.targets).toHaveLength(1);
      const t = aimServers(rng(seed), "holder", [all], five, five, true)!.targets;
      expect(new Set(t).size).toBe(3);
    }
  });

  it("skips granting nodes already under a fault, and a hold none of whose nodes is free", () => {
    for (let seed = 0; seed < 50; seed++) {
      const a = aimServers(rng(seed), "holder", [bare, { worker: "worker-1", granted: ["redis-1"] }], five, ["redis-3", "redis-4"])!;
      expect(a.targets).toEqual(["redis-4"]);
      expect(a.aim.holder).toBe("worker-2");
    }
  });

  it("a hold granted by the service as a whole (a single Redis) aims at its server", () => {
    const a = aimServers(rng(1), "holder", [{ worker: "worker-1", granted: null }], ["redis-1"], ["redis-1"])!;
    expect(a).toEqual({ targets: ["redis-1"], aim: { aim: "holder", holder: "worker-1" } });
  });

  it("with nothing held, or --aim random, any server, and the value says which", () => {
    const seen = new Set<string>();
    for (let seed = 0; seed < 100; seed++) {
      const none = aimServers(rng(seed), "holder", [], five, five)!;
      expect(none.aim).toEqual({ aim: "random", held: 0 });
      const random = aimServers(rng(seed), "random", [bare], five, five)!;
      expect(random.aim).toEqual({ aim: "random" });
      seen.add(random.targets[0]);
    }
    expect(seen.size).toBe(5);
    expect(aimServers(rng(1), "holder", [bare], five, [])).toBeNull();
  });
});

describe("each aimed nemesis, from a known state of holds", () => {
  it("kill: SIGKILLs a node that granted the hold (three of a hold granted by all five), and records why", async () => {
    for (let seed = 0; seed < 20; seed++) {
      const { ctx, done, events } = context(seed, "holder", [bare]);
      const kill = killNemesis();
      await kill.inject(ctx);
      expect(done).toHaveLength(1);
      expect(bare.granted!.map((s) => `kill ${s}`)).toContain(done[0]);
      expect(events[0].f).toBe("kill");
      expect(events[0].value).toMatchObject({ aim: "holder", holder: "worker-2", granted: bare.granted, restart_delay_ms: 1000 });
      await kill.heal(ctx);
      const wide = context(seed, "holder", [all]);
      const again = killNemesis();
      await again.inject(wide.ctx);
      expect(new Set(wide.done).size).toBe(3);
      await again.heal(wide.ctx);
      expect(wide.done.filter((d) => d.startsWith("restart"))).toHaveLength(3);
    }
  });

  it("kill: one at a time, and after a restart an ensemble with a leader is given one lease to settle before the next", async () => {
    for (const ensemble of [true, false]) {
      const { ctx, done } = context(3, "holder", [bare]);
      ctx.options = { ...ctx.options, restartDelayMs: 30, leaseMs: 300 };
      if (ensemble) (ctx.cluster as { leader?: () => Promise<string | null> }).leader = async () => "redis-1";
      const kill = killNemesis();
      // No restart ends before the kill plus its 30 ms delay, however late this test's timers fire.
      const killedAt = Date.now();
      expect(await kill.inject(ctx)).toBe(true);
      // Down: no second kill, and the others see it in force.
      expect(await kill.inject(ctx)).toBe(false);
      expect(kill.endsAt!()).toBeGreaterThan(Date.now());
      await new Promise((r) => setTimeout(r, 80));
      expect(done.filter((d) => d.startsWith("restart"))).toHaveLength(1);
      if (ensemble) {
        expect(await kill.inject(ctx)).toBe(false);
        // A lease after the restart (a bound from the test's own clock failed when its 80 ms wait fired late).
        expect(kill.endsAt!()).toBeGreaterThanOrEqual(killedAt + 30 + 300);
        await new Promise((r) => setTimeout(r, 300));
      } else {
        expect(kill.endsAt!()).toBe(0);
      }
      expect(kill.endsAt!()).toBe(0);
      expect(await kill.inject(ctx)).toBe(true);
      await kill.heal(ctx);
    }
  });

  it("clock: jumps forward on the granting nodes it takes to leave the hold short of a majority", async () => {
    for (let seed = 0; seed < 20; seed++) {
      const { ctx, done, events } = context(seed, "holder", [all]);
      const clock = clockNemesis();
      await clock.inject(ctx);
      expect(done).toHaveLength(3);
      for (const d of done) expect(d).toMatch(/^clock redis-\d 2000$/);
      expect(events.map((e) => e.value.offset_ms)).toEqual([2000, 2000, 2000]);
      expect(events[0].value).toMatchObject({ aim: "holder", holder: "worker-3" });
      await clock.heal(ctx);
    }
  });

  it("clock with --aim random: one node, either way", async () => {
    const signs = new Set<number>();
    for (let seed = 0; seed < 40; seed++) {
      const { ctx, done, events } = context(seed, "random", [all]);
      const clock = clockNemesis();
      await clock.inject(ctx);
      expect(done).toHaveLength(1);
      signs.add(Math.sign(events[0].value.offset_ms as number));
      await clock.heal(ctx);
    }
    expect([...signs].sort()).toEqual([-1, 1]);
  });

  it("pause: freezes a holder's worker; pause-server a node that granted", () => {
    for (let seed = 0; seed < 50; seed++) {
      const { ctx } = context(seed, "holder", [bare]);
      expect(pickTarget(ctx, "workers", workers)).toEqual({ target: "worker-2", aim: { aim: "holder", holder: "worker-2" } });
      const server = pickTarget(ctx, "servers", five);
      expect(bare.granted).toContain(server.target);
      // The holder already frozen: another worker, and the value says the holders were taken.
      expect(pickTarget(ctx, "workers", ["worker-1", "worker-3"]).aim).toEqual({ aim: "random", held: 1 });
    }
  });

  it("latency: slows a holder's worker, and says so", () => {
    for (let seed = 0; seed < 50; seed++) {
      const { ctx } = context(seed, "holder", [bare]);
      const holders = aimedWorkers(ctx);
      const slow = slowWorkers(rng(seed), workers, holders);
      expect(slow).toContain("worker-2");
      expect(workerAim("holder", slow, holders)).toEqual({ aim: "holder", holder: "worker-2" });
    }
    expect(aimedWorkers(context(1, "random", [bare]).ctx)).toEqual([]);
  });

  it("latency through inject: a fault that finds nobody holding waits for a hold and slows its worker", async () => {
    // The proxies only note the toxics asked of them: what is under test is whom the fault slows.
    let holds: HeldLock[] = [];
    const { ctx, events } = context(3, "holder", []);
    const links = workers.map((w) => ({ proxy: `${w}--redis-1`, worker: w, server: "redis-1", host: "127.0.0.1", port: 1, upstream: "127.0.0.1:2" }));
    Object.assign(ctx, {
      holds: () => holds,
      options: { ...options("holder"), intervalS: 2 },
      links: { all: links, prefix: "", shared: () => [], proxy: () => ({ addToxic: async () => ({ remove: async () => {} }) }) },
    });
    setTimeout(() => (holds = [{ worker: "worker-3", granted: null }]), 150);
    const latency = latencyNemesis();
    await latency.inject(ctx);
    const [start] = events.filter((e) => e.f === "start-latency");
    expect(start.value).toMatchObject({ aim: "holder", holder: "worker-3" });
    expect(start.value.targets).toContain("worker-3->redis-1");
    await latency.heal(ctx);
  });

  it("partition through inject: aimed at holders, it starts only once the other nemeses' faults (a frozen holder) have ended", async () => {
    const { ctx, events } = context(4, "holder", [bare]);
    const links = workers.flatMap((w) => five.map((srv) => ({ proxy: `${w}--${srv}`, worker: w, server: srv, host: "127.0.0.1", port: 1, upstream: "127.0.0.1:2" })));
    const pauseEnds = Date.now() + 300;
    Object.assign(ctx, {
      othersEndAt: (self: string) => (self === "partition" ? pauseEnds : 0),
      cluster: {},
      links: {
        all: links,
        prefix: "",
        shared: () => [],
        between: (ws: readonly string[], ss: readonly string[]) => links.filter((l) => ws.includes(l.worker) && ss.includes(l.server)),
        proxy: () => ({ addToxic: async () => ({ remove: async () => {} }) }),
      },
    });
    const partition = partitionNemesis();
    expect(await partition.inject(ctx)).toBe(true);
    expect(Date.now()).toBeGreaterThanOrEqual(pauseEnds);
    expect(events.map((e) => e.f)).toEqual(["start-partition"]);
    await partition.heal(ctx);
    // Half a lease before the final heal: too late for a partition to matter, none starts.
    expect(await partition.inject({ ...ctx, remainingMs: () => 500 } as NemesisContext)).toBe(false);
    expect(events.map((e) => e.f)).toEqual(["start-partition", "stop-partition"]);
  });

  it("pause through inject: finding nobody holding while another fault is in force, it waits that fault out and freezes the holder that comes after", async () => {
    let holds: HeldLock[] = [];
    const { ctx, events } = context(5, "holder", []);
    const frozen: string[] = [];
    const partitionEnds = Date.now() + 400;
    Object.assign(ctx, {
      // The usual wait is a quarter second (half of a 0.5 s interval); the partition lasts 400 ms.
      options: { ...options("holder"), intervalS: 0.5 },
      holds: () => holds,
      othersEndAt: (self: string) => (self === "pause" ? partitionEnds : 0),
      processes: { pause: (w: string) => (frozen.push(w), true), resume: () => {}, running: () => true },
    });
    // A hold comes after the partition: 550 ms from now, past the usual wait.
    setTimeout(() => (holds = [{ worker: "worker-3", granted: null }]), 550);
    const pause = pauseNemesis("pause", "workers", (c) => c.workers, true);
    expect(await pause.inject(ctx)).toBe(true);
    expect(frozen).toEqual(["worker-3"]);
    expect(events[0].value).toMatchObject({ aim: "holder", holder: "worker-3" });
    await pause.heal(ctx);
  });

  it("pause and latency aimed at holders wait for a hold to start (at most half an interval), and not at all with --aim random", async () => {
    let holds: HeldLock[] = [];
    const ctx = { options: { ...options("holder"), intervalS: 2 }, holds: () => holds };
    setTimeout(() => (holds = [bare]), 150);
    let t = Date.now();
    await holderAmong(ctx, workers);
    expect(Date.now() - t).toBeGreaterThanOrEqual(140);
    expect(Date.now() - t).toBeLessThan(900);
    // Nobody ever holds: it gives up after half the 2 s interval and the fault lands at random.
    holds = [];
    t = Date.now();
    await holderAmong(ctx, workers);
    expect(Date.now() - t).toBeGreaterThanOrEqual(990);
    t = Date.now();
    await holderAmong({ ...ctx, options: { ...ctx.options, aim: "random" } }, workers);
    expect(Date.now() - t).toBeLessThan(50);
  });

  it("a fault that finds nobody holding while another nemesis's fault keeps them off waits that fault out, then the usual share", async () => {
    let holds: HeldLock[] = [];
    // A partition in force for 600 ms more; the interval's share is 250 ms.
    const partitionEnds = Date.now() + 600;
    const ctx = { options: { ...options("holder"), intervalS: 0.5 }, holds: () => holds, othersEndAt: (self: string) => (self === "pause" ? partitionEnds : 0) };
    let t = Date.now();
    await holderAmong(ctx, workers, "pause");
    // Nobody ever held: it waited out the partition and then a share.
    expect(Date.now() - t).toBeGreaterThanOrEqual(840);
    expect(Date.now() - t).toBeLessThan(1500);
    // A hold after the partition ends is taken as soon as it starts.
    const ends = Date.now() + 400;
    const ctx2 = { ...ctx, othersEndAt: () => ends };
    setTimeout(() => (holds = [bare]), 500);
    t = Date.now();
    await holderAmong(ctx2, workers, "pause");
    expect(Date.now() - t).toBeGreaterThanOrEqual(490);
    expect(Date.now() - t).toBeLessThan(640);
    // Someone holds (under a fault or not): nothing to wait out.
    t = Date.now();
    await holderAmong({ ...ctx, othersEndAt: () => Date.now() + 5000 }, workers, "pause");
    expect(Date.now() - t).toBeLessThan(50);
  });

  it("a partition aimed at holders waits for the other nemeses' faults to end (a frozen holder), and not with --aim random", async () => {
    const pauseEnds = Date.now() + 300;
    const ctx = { options: options("holder"), othersEndAt: (self: string) => (self === "partition" ? pauseEnds : 0) };
    let t = Date.now();
    await othersOver(ctx, "partition");
    expect(Date.now()).toBeGreaterThanOrEqual(pauseEnds);
    expect(Date.now() - t).toBeLessThan(450);
    t = Date.now();
    await othersOver({ ...ctx, othersEndAt: () => Date.now() + 5000, options: options("random") }, "partition");
    expect(Date.now() - t).toBeLessThan(50);
    // Nor past the point where a lease no longer fits before the heal.
    t = Date.now();
    await othersOver({ ...ctx, othersEndAt: () => Infinity, remainingMs: () => 1200 - (Date.now() - t) }, "partition");
    expect(Date.now() - t).toBeGreaterThanOrEqual(190);
    expect(Date.now() - t).toBeLessThan(400);
  });

  it("never waits past the point where a lease no longer fits before the final heal", async () => {
    const holds: HeldLock[] = [];
    let left = 1400;
    const started = Date.now();
    const ctx = {
      options: { ...options("holder"), intervalS: 2, leaseMs: 1000 },
      holds: () => holds,
      remainingMs: () => left - (Date.now() - started),
      othersEndAt: () => Infinity,
    };
    expect(tooLate(ctx)).toBe(false);
    await holderAmong(ctx, workers, "pause");
    // 1.4 s left and a 1 s lease: it gave up 400 ms in, though the other fault lasts until the heal.
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(Date.now() - started).toBeLessThan(600);
    expect(tooLate(ctx)).toBe(true);
    left = 10_000;
    expect(tooLate({ ...ctx, stopping: () => true })).toBe(true);
  });

  it("partition: the holder's worker ends on a side without a majority while another worker keeps one", () => {
    const reach = (g: ReturnType<typeof grudge>, w: string, servers: string[]) => servers.filter((s) => !g.cut.some(([cw, cs]) => cw === w && cs === s)).length;
    for (const kind of EXILING)
      for (const servers of [five, ["redis-1"], ["etcd-1", "etcd-2", "etcd-3"]])
        for (let seed = 0; seed < 100; seed++) {
          const g = grudge(kind, rng(seed), workers, servers, null, "worker-2");
          const majority = Math.floor(servers.length / 2) + 1;
          expect(g.exiled, `${kind} seed ${seed} on ${servers.length}`).toBe(true);
          expect(reach(g, "worker-2", servers)).toBeLessThan(majority);
          expect(workers.some((w) => w !== "worker-2" && reach(g, w, servers) >= majority)).toBe(true);
        }
  });

  it("partition: a bridge cannot exile anyone, and says so", () => {
    const g = grudge("bridge", rng(3), workers, five, null, "worker-2");
    expect(g.exiled).toBe(false);
    expect(aimSentence({ aim: "holder", holder: "worker-2", exiled: false })).toMatch(/could not leave it without the lock service/);
  });
});

describe("the holds the nemeses aim at", () => {
  it("come from the history: acquire ok until the release invoke or an info, with Redlock's granting nodes", () => {
    const t = new HoldTracker((p) => `worker-${(p % 2) + 1}`);
    t.observe([
      { process: 0, type: "ok", f: "acquire", value: { owner: "a", fence: 1, ttl_ms: 1000, granted: ["redis-1", "redis-2", "redis-3"] } },
      { process: 1, type: "ok", f: "acquire", value: { owner: "b", fence: 2, ttl_ms: 1000 } },
    ] as never);
    expect(t.holds()).toEqual([
      { worker: "worker-1", granted: ["redis-1", "redis-2", "redis-3"], writeDue: true },
      { worker: "worker-2", granted: null, writeDue: true },
    ]);
    // Once a hold's write is invoked, a fault on it would delay only its release.
    t.observe([{ process: 1, type: "invoke", f: "write", value: { owner: "b", fence: 2 } }] as never);
    expect(t.holds()).toEqual([
      { worker: "worker-1", granted: ["redis-1", "redis-2", "redis-3"], writeDue: true },
      { worker: "worker-2", granted: null, writeDue: false },
    ]);
    t.observe([{ process: 0, type: "invoke", f: "release", value: {} }, { process: 1, type: "info", f: "write", value: {} }] as never);
    expect(t.holds()).toEqual([]);
    // The next hold of the process has its write due again; an rw lock's read hold never has.
    t.observe([{ process: 1, type: "ok", f: "acquire", value: { owner: "c", fence: 3, ttl_ms: 1000 } }] as never);
    t.observe([{ process: 2, type: "ok", f: "acquire", value: { owner: "d", fence: 4, ttl_ms: 1000, mode: "read" } }] as never);
    expect(t.holds()).toEqual([
      { worker: "worker-2", granted: null, writeDue: true },
      { worker: "worker-1", granted: null, writeDue: false },
    ]);
  });

  it("aim at a hold whose write is still to come before one that has written, and at any hold when none has", () => {
    const ctx = { options: options("holder"), holds: () => holds };
    let holds: HeldLock[] = [
      { worker: "worker-1", granted: null, writeDue: false },
      { worker: "worker-3", granted: null, writeDue: true },
    ];
    expect(aimedWorkers(ctx)).toEqual(["worker-3"]);
    holds = [{ worker: "worker-1", granted: null, writeDue: false }];
    expect(aimedWorkers(ctx)).toEqual(["worker-1"]);
    // Holds that do not say (a hand-made one) count as due.
    holds = [bare, { worker: "worker-1", granted: null, writeDue: false }];
    expect(aimedWorkers(ctx)).toEqual(["worker-2"]);
  });

  it("the report says why a fault landed where it did", () => {
    expect(aimSentence({ aim: "holder", holder: "worker-2", granted: ["redis-2", "redis-4"] })).toBe("worker-2 held a lock granted by redis-2, redis-4");
    expect(aimSentence({ aim: "random", held: 0 })).toBe("nothing was held, so anywhere");
    expect(aimSentence({ aim: "random" })).toBe("at random (--aim random)");
    expect(aimSentence({ targets: ["redis-1"] })).toBeNull();
  });
});

describe("--aim and faults scaled to the TTL", () => {
  const build = (...args: string[]) => buildTest(parseArgs(args, TEST_OPTIONS).options);

  it("defaults follow --ttl; the default TTL gives the old fixed figures", () => {
    const d = build().nemesisOptions;
    expect([d.pauseMinMs, d.pauseMaxMs, d.faultMinMs, d.faultMaxMs, d.restartDelayMs, d.latencyMs, d.clockOffsetMs]).toEqual([500, 4000, 1000, 5000, 1000, 1200, 2000]);
    const t = build("--ttl", "5000").nemesisOptions;
    expect([t.pauseMinMs, t.pauseMaxMs, t.faultMinMs, t.faultMaxMs, t.restartDelayMs, t.latencyMs, t.clockOffsetMs]).toEqual([2500, 20000, 5000, 25000, 5000, 6000, 10000]);
    expect(build("--ttl", "5000", "--pause-max", "3000").nemesisOptions.pauseMaxMs).toBe(3000);
  });

  it("--aim, and its old name --pause-target, which must not disagree", () => {
    expect(build().nemesisOptions.aim).toBe("holder");
    expect(build("--aim", "random").nemesisOptions.aim).toBe("random");
    expect(build("--pause-target", "random").nemesisOptions.aim).toBe("random");
    expect(() => build("--aim", "holder", "--pause-target", "random")).toThrow(BadInput);
    expect(() => build("--ttl", "5000", "--fault-max", "2000")).toThrow(/--fault-min \(5000, from --ttl\) must not exceed --fault-max \(2000\)/);
  });
});
