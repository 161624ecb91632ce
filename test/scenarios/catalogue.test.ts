// The scenarios as data and the script that drives them, without servers: every
// scenario builds into a test:jepsen Test with its script; the options a user may
// set are taken and the others refused; predictions follow the options; the
// script performs its steps at their moments, before the clients where asked,
// and heals what is in force. And the CLI's --list and its refusals.
import { BACKEND_SCENARIOS } from "../../backends/index.ts";
import { describe, it, expect } from "vitest";
import { existsSync } from "node:fs";
import { SCENARIOS, buildScenario, scriptOf } from "../../scenarios/index.ts";
import { ScriptSchedule, type Fault, type Nemesis, type NemesisContext, type NemesisKind } from "../../nemesis/index.ts";
import { BadInput, parseArgs } from "../../lib/index.ts";
import { TEST_OPTIONS, buildTest } from "../../runner/options.ts";
import { tempRunDir, runCli, latestRun } from "../helpers.ts";

describe("the scenarios", () => {
  it("are the catalogue's ten, ZooKeeper's, P1, the libraries' users' reports and the lock kinds', DynamoDB's, the lock servers', each building into a test with its script and a firm prediction", () => {
    // The rows on any backend, then each backend's own in the registry's order.
    const own = BACKEND_SCENARIOS.map((s) => s.id);
    expect(own).toEqual(expect.arrayContaining(["K3", "K4", "K5", "K7", "Z1", "Z2", "Z3", "P1", "D1", "D2", "D3", "M1", "M2", "M3", "M4", "E2", "L5", "F3"]));
    expect(Object.keys(SCENARIOS)).toEqual(["K1", "K2", "T1", "F1", "F2", "C1", "L1", "L2", "E1", "L3", "K6", "L4", "R1", "R2", "S1", "W1", "W2", "Q1", "Q2", "G1", ...own]);
    for (const s of Object.values(SCENARIOS)) {
      const run = buildScenario(s, []);
      expect(run.test.name.startsWith(`${s.id.toLowerCase()}-`)).toBe(true);
      expect(run.test.script).toEqual(scriptOf(s, run.options));
      // The random schedule's nemeses are the script's, so the backend is checked for them.
      expect(run.test.nemeses).toEqual([...new Set(run.test.script!.map((st) => st.nemesis))]);
      expect(run.prediction.anomalies, s.id).not.toBeNull();
      expect(run.test.seed).toBe(s.id === "W1" || s.id === "W2" ? 2 : 1);
    }
    expect(buildScenario(SCENARIOS.K3, []).test.serverOptions.skewableClocks).toBe(true);
    expect(buildScenario(SCENARIOS.K4, []).test.serverOptions.skewableClocks).toBe(false);
  });

  it("predict what the issue asks for, and follow the options a user sets", () => {
    const p = (id: string, ...argv: string[]) => buildScenario(SCENARIOS[id], argv).prediction.anomalies;
    expect(p("K3")).toEqual(["mutex-violation"]);
    expect(p("K4")).toEqual(["mutex-violation"]);
    expect(p("T1")).toEqual(["mutex-violation"]);
    expect(p("P1")).toEqual(["mutex-violation"]);
    expect(p("P1", "--pg-pooler", "none")).toEqual([]);
    expect(p("L2")).toEqual(["mutex-violation"]);
    expect(p("L2", "--client", "redis-py")).toEqual([]);
    expect(p("E1")).toEqual(["mutex-violation"]);
    expect(p("E1", "--client", "python-etcd3")).toEqual([]);
    expect(p("L3")).toEqual(["stale-write-accepted"]);
    expect(p("L3", "--nemesis", "none")).toEqual([]);
    expect(p("L3", "--fence", "on")).toEqual([]);
    expect(p("K6")).toEqual([]);
    expect(p("L4")).toEqual([]);
    expect(p("E2")).toEqual([]);
    expect(p("E2", "--fence", "on")).toEqual([]);
    expect(p("L5")).toEqual(["stale-write-accepted"]);
    expect(p("L5", "--fence", "on")).toEqual([]);
    expect(p("L5", "--client", "redisson-fenced", "--fence", "on")).toEqual([]);
    expect(p("F3")).toEqual(["stale-write-accepted"]);
    expect(p("F3", "--fence", "on")).toEqual([]);
    expect(p("K7")).toEqual(["mutex-violation"]);
    expect(p("K7", "--redis-persistence", "always")).toEqual([]);
    expect(p("Z3")).toEqual(["orphan-lock-node"]);
    expect(p("Z3", "--client", "curator")).toEqual([]);
    expect(p("F1")).toEqual(expect.arrayContaining(["duplicate-fence", "fence-regression"]));
    expect(p("F2")).toEqual(expect.arrayContaining(["fence-regression", "duplicate-fence"]));
    expect(p("K5")).toEqual(["lost-update", "expired-on-arrival"]);
    expect(p("K5", "--redlock-check-validity", "on")).toEqual([]);
    expect(p("K4", "--redis-persistence", "always", "--restart-delay", "3500")).toEqual([]);
    expect(p("K4", "--fence-source", "max-incr")).toEqual(["mutex-violation", "duplicate-fence"]);
    expect(p("M1")).toEqual(["stale-write-accepted"]);
    expect(p("M1", "--fence", "on")).toEqual([]);
    expect(p("M2")).toEqual(["mutex-violation", "duplicate-fence"]);
    expect(p("M2", "--lockserver-persistence", "always")).toEqual([]);
    expect(p("M2", "--fence-source", "single")).toBeNull();
    expect(p("M3")).toEqual(["fence-regression", "duplicate-fence"]);
    expect(p("M4")).toEqual([]);
    expect(p("M4", "--fence", "off")).toEqual(["stale-write-accepted"]);
    expect(p("K1")).toEqual(["stale-write-accepted"]);
    expect(p("K1", "--fence", "on")).toEqual([]);
    expect(p("T1", "--client", "redis")).toEqual([]);
    expect(p("C1")).toEqual(["lost-update"]);
    expect(p("C1", "--fence-reads")).toEqual([]);
    expect(p("L1")).toEqual(["lost-lock-unnoticed"]);
    expect(p("L1", "--client", "redis")).toEqual([]);
    expect(p("Z1")).toEqual(["stale-write-accepted"]);
    expect(p("Z1", "--fence", "on")).toEqual([]);
    expect(p("Z2")).toEqual(["orphan-lock-node"]);
    expect(p("Z2", "--client", "zookeeper")).toEqual([]);
    expect(p("R1")).toEqual(["reentrancy-violation"]);
    expect(p("R1", "--client", "redis-reentrant")).toEqual([]);
    expect(p("R2")).toEqual(["stale-write-accepted", "interleaved-writers"]);
    expect(p("R2", "--fence", "on")).toEqual([]);
    expect(p("R2", "--client", "redis-reentrant")).toEqual([]);
    expect(p("S1")).toEqual(["semaphore-overflow"]);
    expect(p("S1", "--client", "redis-semaphore-counting")).toEqual([]);
    expect(p("W1")).toEqual([]);
    expect(p("W1", "--fence", "off")).toEqual([]);
    expect(p("W2")).toEqual(["rw-violation"]);
    expect(p("W2", "--client", "etcd-rw")).toEqual([]);
    expect(p("Q1")).toEqual([]);
    expect(p("Q2")).toEqual(["stuck-lock"]);
    expect(p("G1")).toEqual(["grant-after-cancel"]);
    expect(p("G1", "--client", "zookeeper")).toEqual([]);
    // Their depths, modes and withdrawals are the seed's draws: another seed, no call.
    expect(p("R1", "--seed", "3")).toBeNull();
    expect(p("G1", "--seed", "3")).toBeNull();
  });

  it("take the user's free options and variations, fit the rest around them, and refuse what would move a fault", () => {
    const k4 = buildScenario(SCENARIOS.K4, ["--restart-delay", "3500", "--seed", "9", "--store", "/tmp/x"]);
    expect(k4.test.seed).toBe(9);
    expect(k4.test.store).toBe("/tmp/x");
    // The run lasts until redis-3 is back.
    expect(k4.test.timeLimitS).toBeGreaterThanOrEqual(5);
    expect(k4.test.script!.find((s) => s.nemesis === "kill")!.fault.durationMs).toBe(3500);
    // A release in one step has no gap.
    expect(buildScenario(SCENARIOS.T1, ["--client", "redis"]).test.clientOptions).toEqual({});
    expect(buildScenario(SCENARIOS.T1, []).test.clientOptions).toEqual({ own: { "release-gap": 900 } });
    expect(buildScenario(SCENARIOS.K5, []).test.clientOptions).toMatchObject({ own: { "redlock-check-validity": false }, pauseAfterReplies: { ms: 4000, clients: [0] } });
    // A fenceless semaphore takes its fences from a Redis counter unless the user says otherwise.
    expect(buildScenario(SCENARIOS.S1, ["--client", "redis-semaphore-counting"]).options["fence-source"]).toBe("single");
    expect(buildScenario(SCENARIOS.S1, []).options["fence-source"]).toBeUndefined();
    expect(() => buildScenario(SCENARIOS.K3, ["--ttl", "500"])).toThrow(/--ttl is fixed by scenario K3/);
    expect(() => buildScenario(SCENARIOS.K1, ["--nemesis", "kill"])).toThrow(BadInput);
    expect(() => buildScenario(SCENARIOS.K5, ["--fence", "on"])).toThrow(/--fence is fixed by scenario K5/);
    // A variation buildTest itself refuses is refused with its message.
    expect(() => buildScenario(SCENARIOS.K3, ["--fence", "on"])).toThrow(/--fence-source none with --fence on/);
  });
});

describe("the client options the scenarios rest on", () => {
  const build = (...argv: string[]) => buildTest(parseArgs(argv, TEST_OPTIONS).options);

  it("--release-gap reaches redis-unsafe-release, and is refused elsewhere", () => {
    expect(build("--client", "redis-unsafe-release", "--release-gap", "900").clientOptions).toEqual({ own: { "release-gap": 900 } });
    expect(() => build("--client", "redis", "--release-gap", "900")).toThrow(/--release-gap applies to --client redis-unsafe-release only/);
  });

  it("--pause-at reenter needs --lock reentrant; --pause-at release takes any kind", () => {
    expect(build("--lock", "reentrant", "--client", "redis-reentrant", "--pause", "100", "--pause-at", "reenter").workloadOptions.pauseAt).toBe("reenter");
    expect(() => build("--pause", "100", "--pause-at", "reenter")).toThrow(/--pause-at reenter needs --lock reentrant \(a hold that enters again\), not --lock mutex/);
    expect(build("--pause", "100", "--pause-at", "release").workloadOptions.pauseAt).toBe("release");
  });

  it("--pause-at replies pauses the named clients of --client redlock, and is refused for the npm packages", () => {
    const t = build("--backend", "redlock", "--client", "redlock", "--pause", "4000", "--pause-at", "replies", "--pause-clients", "0");
    expect(t.clientOptions.pauseAfterReplies).toEqual({ ms: 4000, clients: [0] });
    expect(t.workloadOptions.pauseAt).toBe("replies");
    expect(() => build("--backend", "redlock", "--pause", "4000", "--pause-at", "replies")).toThrow(/--pause-at replies applies to --client redlock only/);
  });
});

/** A nemesis that only notes what it was asked to do, when. Pure logic: no process is touched. */
function noting(log: string[], now: () => number): NemesisKind {
  return {
    describe: "notes",
    aims: "servers",
    create: (): Nemesis => {
      let open = 0;
      return {
        name: "note",
        describe: "notes",
        inject: async () => false,
        async perform(_ctx: NemesisContext, f: Fault) {
          if (f.targets.includes("broken")) throw new Error("cannot");
          open++;
          log.push(`${f.targets.join(",")}@${Math.round(now() / 1e6)}`);
        },
        async heal() {
          log.push(`heal ${open}`);
          open = 0;
        },
        active: () => [],
      };
    },
  };
}

describe("a script", () => {
  const ctx = { servers: ["a", "b", "broken"], workers: [], links: null } as unknown as NemesisContext;
  const t0 = performance.now();
  const clock = () => (performance.now() - t0) * 1e6;

  it("performs the steps due before the clients in prepare, the others at their moments, and heals at the end", async () => {
    const log: string[] = [];
    const warnings: string[] = [];
    const s = new ScriptSchedule(
      [
        { atMs: 300, nemesis: "note", fault: { targets: ["b"], durationMs: null } },
        { atMs: 0, nemesis: "note", fault: { targets: ["a"], durationMs: null } },
        { atMs: 150, nemesis: "note", fault: { targets: ["broken"], durationMs: null } },
        { atMs: 5000, nemesis: "note", fault: { targets: ["a"], durationMs: null } },
      ],
      { note: noting(log, clock) },
      ctx,
      clock,
      (l) => warnings.push(l),
    );
    await s.prepare();
    expect(log).toHaveLength(1);
    const startAt = clock();
    s.start(startAt);
    await new Promise((r) => setTimeout(r, 600));
    await s.healAll();
    const at = (entry: string) => Number(entry.split("@")[1]) - startAt / 1e6;
    expect(log[0]).toMatch(/^a@/);
    expect(log[1]).toMatch(/^b@/);
    expect(at(log[1])).toBeGreaterThanOrEqual(299);
    // The step that failed is reported and the script went on; the one after the heal never ran.
    expect(s.failures).toEqual([expect.stringMatching(/note at 150 ms on broken: cannot/)]);
    expect(warnings).toEqual(s.failures);
    expect(log.slice(2)).toEqual(["heal 2"]);
  });

  it("refuses, before anything runs, a target the run does not have", async () => {
    const log: string[] = [];
    const s = new ScriptSchedule([{ atMs: 100, nemesis: "note", fault: { targets: ["redis-9"], durationMs: 10 } }], { note: noting(log, clock) }, ctx, clock);
    await expect(s.prepare()).rejects.toThrow(/names redis-9, which this run does not have \(its servers: a, b, broken\)/);
    expect(log).toEqual([]);
    expect(() => new ScriptSchedule([{ atMs: 0, nemesis: "nope", fault: { targets: [], durationMs: null } }], {}, ctx, clock)).toThrow(/no nemesis named nope/);
  });
});

describe("npm run scenario", () => {
  it("--list prints each id with what it shows, one line each", async () => {
    const cli = runCli("scenario", ["--list"]);
    expect(await cli.exit).toBe(0);
    const lines = cli.stdout().trim().split("\n");
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual(Object.keys(SCENARIOS));
    for (const s of Object.values(SCENARIOS)) expect(lines).toContain(`${s.id}  ${s.title}: ${s.shows}`);
  });

  it("an unknown id, or an option the scenario fixes, is bad input: 254, the ids or the options it takes, nothing stored", async () => {
    const store = tempRunDir("fc-scenario-");
    const unknown = runCli("scenario", ["K9", "--store", store]);
    expect(await unknown.exit).toBe(254);
    expect(unknown.stderr()).toMatch(/unknown scenario "K9"; did you mean K1\? \(scenarios: K1, K2, T1, F1, F2/);
    const fixed = runCli("scenario", ["T1", "--concurrency", "5", "--store", store]);
    expect(await fixed.exit).toBe(254);
    expect(fixed.stderr()).toMatch(/--concurrency is fixed by scenario T1.*--release-gap/);
    const none = runCli("scenario", []);
    expect(await none.exit).toBe(254);
    expect(none.stderr()).toMatch(/Usage: fencecheck scenario <id>/);
    expect(existsSync(latestRun(store))).toBe(false);
  });
});
