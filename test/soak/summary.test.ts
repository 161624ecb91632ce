// The summary and the night-to-night comparison on hand-written run records (pure
// logic, no runs): expectations judged, Jepsen's test-all exit codes, detection
// rates, and changes that are real against changes within the noise.
import { describe, it, expect } from "vitest";
import { compareSummaries, exitCodeOf, noiseOf, parseMatrix, summarize, type RunRecord, type SoakPlan, type SoakSummary } from "../../soak/index.ts";
import { fencingText, libraryRows, tellsText } from "../../soak/libraries.ts";
import { figuresOf } from "../../soak/run-one.ts";

const matrix = parseMatrix(
  JSON.stringify({
    name: "m",
    configurations: [
      { name: "safe", options: { fence: "on" }, expect: "valid" },
      { name: "unsafe", options: { fence: "off" }, expect: { find: { "stale-write-accepted": 0.9 } } },
    ],
  }),
  "m.json",
  "m",
);

function plan(count: number): SoakPlan {
  const runs = [];
  for (let index = 0; index < count; index++) for (const c of matrix.configurations) runs.push({ config: c.name, index, seed: index, argv: [] });
  return {
    format: 1,
    kind: "soak",
    matrix: { name: matrix.name, source: matrix.source, hash: matrix.hash, configurations: matrix.configurations },
    options: { test_count: count, time_limit_s: null, time_budget_s: null, seed: 1, only: null },
    started: "2026-11-24T00:00:00.000Z",
    command: [],
    runs,
  };
}

function rec(config: string, index: number, status: RunRecord["status"], anomalies: string[] = []): RunRecord {
  return {
    config,
    index,
    seed: index,
    status,
    exit_code: { valid: 0, invalid: 1, unknown: 2, crashed: 255, interrupted: 130 }[status],
    run_dir: null,
    output: "",
    wall_s: 1,
    anomaly_types: anomalies,
    anomaly_counts: Object.fromEntries(anomalies.map((a) => [a, 2])),
    acquire_ms: { p50: index + 1, p99: 10 * (index + 1) },
    faults: { "start-pause": 3 },
    argv: [],
  };
}

const SWA = "stale-write-accepted";
function soak(records: RunRecord[], count = 3, opts: { interrupted?: boolean } = {}): SoakSummary {
  return summarize({ plan: plan(count), records, notRun: [], finished: new Date(0), wallS: 1, interrupted: opts.interrupted ?? false, diskBytes: 0 });
}
const good = (): RunRecord[] => [0, 1, 2].flatMap((i) => [rec("safe", i, "valid"), rec("unsafe", i, "invalid", [SWA])]);

describe("soak summary", () => {
  it("every expectation met: exit 0, detection 100%, medians and fault totals across runs", () => {
    const s = soak(good());
    expect(s.exit_code).toBe(0);
    const [safe, unsafe] = s.configurations;
    expect(safe.expectation).toBe("met");
    expect(safe.counts).toMatchObject({ valid: 3, invalid: 0 });
    expect(safe.acquire_ms).toEqual({ p50: 2, p99: 20 });
    expect(safe.faults).toEqual({ "start-pause": 9 });
    expect(unsafe.expectation).toBe("met");
    expect(unsafe.detection).toEqual([{ type: SWA, found: 3, runs: 3, rate: 1, min: 0.9 }]);
    expect(unsafe.anomalies).toEqual({ [SWA]: 3 });
    expect(unsafe.witnesses).toEqual({ [SWA]: 6 });
  });

  it("an anomaly in a safe configuration, or a detection rate below its minimum, misses the expectation: exit 1", () => {
    const r = good();
    r[0] = rec("safe", 0, "invalid", ["mutex-violation"]);
    let s = soak(r);
    expect(s.exit_code).toBe(1);
    expect(s.configurations[0].expectation).toBe("missed");
    expect(s.configurations[0].why).toMatch(/mutex-violation showed in 1 of 3 runs/);
    expect(s.verdict).toMatch(/MISSED expectation: safe/);

    const r2 = good();
    r2[1] = rec("unsafe", 0, "valid");
    s = soak(r2);
    expect(s.exit_code).toBe(1);
    expect(s.configurations[1].expectation).toBe("missed");
    expect(s.configurations[1].detection[0]).toMatchObject({ found: 2, runs: 3 });
    expect(s.configurations[1].why).toMatch(/found in 2 of 3 runs \(67%\), below the 90% expected/);
  });

  it("an UNKNOWN run in a configuration expected valid misses its expectation, and says when an adapter's protocol errors made it so", () => {
    const r = good();
    // The run's record as the soak makes it from results.json.
    const results = { valid: "unknown" as const, anomaly_types: [], anomalies: {}, stats: { protocol_errors: 2, unknown_reasons: ["the adapter program broke the protocol 2 times"] } };
    r[0] = { ...rec("safe", 0, "unknown"), ...figuresOf(results) };
    expect(r[0].protocol_errors).toBe(2);
    const s = soak(r);
    // Unknown beats missed in the exit code; the configuration is not "met" for it.
    expect(s.exit_code).toBe(2);
    expect(s.configurations[0].expectation).toBe("missed");
    expect(s.configurations[0].why).toBe("expected valid, but 1 of 3 checked runs were UNKNOWN (1 of them because the adapter broke the protocol, 2 times in all: see each run's protocol-errors.ndjson): no anomaly, and no proof either");
    expect(s.verdict).toBe("UNKNOWN runs in safe; MISSED expectation: safe");
    // An unsafe configuration's unknown run is a run that did not find its anomaly, as before.
    const u = good();
    u[1] = rec("unsafe", 0, "unknown");
    expect(soak(u).configurations[0].expectation).toBe("met");
  });

  it("Jepsen's test-all order: a crash beats an unknown, which beats a missed expectation", () => {
    const missed = good();
    missed[0] = rec("safe", 0, "invalid", [SWA]);
    const unknown = [...missed.slice(0, 5), rec("unsafe", 2, "unknown")];
    const crashed = [...unknown.slice(0, 4), rec("safe", 2, "crashed"), unknown[5]];
    expect(soak(missed).exit_code).toBe(1);
    expect(soak(unknown).exit_code).toBe(2);
    expect(soak(crashed).exit_code).toBe(255);
    expect(exitCodeOf(soak(crashed).configurations)).toBe(255);
    // Interrupted: 130 whatever was found, and the runs that finished are still judged.
    const s = soak(crashed, 3, { interrupted: true });
    expect(s.exit_code).toBe(130);
    expect(s.configurations[0].expectation).toBe("missed");
  });

  it("valid with fencing exercised: met only when enough runs had a stale write refused", () => {
    const m = parseMatrix(JSON.stringify({ name: "m", configurations: [{ name: "safe", options: { fence: "on" }, expect: { valid: { exercised: 0.9 } } }] }), "m.json", "m");
    const p = { ...plan(3), matrix: { name: m.name, source: m.source, hash: m.hash, configurations: m.configurations } };
    p.runs = p.runs.filter((r) => r.config === "safe");
    const run = (refused: number[]) => summarize({ plan: p, records: refused.map((n, i) => ({ ...rec("safe", i, "valid"), stale_writes_refused: n })), notRun: [], finished: new Date(0), wallS: 1, interrupted: false, diskBytes: 0 });
    const ok = run([2, 1, 5]);
    expect(ok.exit_code).toBe(0);
    expect(ok.configurations[0].exercised).toEqual({ runs: 3, refused: 3, rate: 1, min: 0.9 });
    expect(ok.configurations[0].expect_text).toBe("valid, fencing used in ≥90%");
    const idle = run([2, 0, 5]);
    expect(idle.exit_code).toBe(1);
    expect(idle.configurations[0].expectation).toBe("missed");
    expect(idle.configurations[0].why).toMatch(/refused a stale write in only 2 of 3 \(67%, at least 90% expected\)/);
    // Without the expectation the share is still shown, and judges nothing.
    const plain = soak([0, 1, 2].flatMap((i) => [{ ...rec("safe", i, "valid"), stale_writes_refused: i }, rec("unsafe", i, "invalid", [SWA])]));
    expect(plain.exit_code).toBe(0);
    expect(plain.configurations[0].exercised).toEqual({ runs: 3, refused: 2, rate: 2 / 3, min: null });
    expect(plain.configurations[1].exercised).toBeNull();
  });

  it("a configuration none of whose runs was checked is not judged, and not passed", () => {
    const s = soak([rec("safe", 0, "crashed"), rec("unsafe", 0, "invalid", [SWA])], 1);
    expect(s.configurations[0].expectation).toBe("not-judged");
    expect(s.verdict).toMatch(/NOT JUDGED.*safe/);
  });
});

describe("nights compared", () => {
  it("newly failing and a new anomaly type are listed first; fixed afterwards", () => {
    const before = soak(good());
    const r = good();
    r[0] = rec("safe", 0, "invalid", ["duplicate-fence"]);
    const now = soak(r);
    const changes = compareSummaries(now, before);
    expect(changes.map((c) => [c.config, c.kind])).toEqual([
      ["safe", "newly-failing"],
      ["safe", "new-anomaly-type"],
    ]);
    expect(changes[1].sentence).toMatch(/duplicate-fence/);
    expect(compareSummaries(before, now).map((c) => c.kind)).toEqual(["fixed", "anomaly-type-gone"]);
    expect(compareSummaries(before, soak(good()))).toEqual([]);
  });

  it("a detection rate that fell is reported only beyond the noise of the run counts", () => {
    const before = soak(good());
    const r = good();
    r[1] = rec("unsafe", 0, "valid");
    // 3/3 then 2/3: within the noise of three runs (but the expectation is now missed).
    expect(compareSummaries(soak(r), before).map((c) => c.kind)).toEqual(["newly-failing"]);
    // 3/3 then 0/3: a real fall.
    const none = [0, 1, 2].flatMap((i) => [rec("safe", i, "valid"), rec("unsafe", i, "valid")]);
    const kinds = compareSummaries(soak(none), before).map((c) => c.kind);
    expect(kinds).toContain("detection-fell");
    expect(noiseOf(3, 3, 2, 3)).toBeGreaterThan(1 / 3);
    expect(noiseOf(3, 3, 0, 3)).toBeLessThan(1);
    expect(noiseOf(20, 20, 19, 20)).toBeGreaterThan(0.05);
  });

  it("configurations added and removed are named", () => {
    const before = soak(good());
    const onlySafe = { ...before, configurations: before.configurations.slice(0, 1) };
    expect(compareSummaries(onlySafe, before).map((c) => [c.config, c.kind])).toEqual([["unsafe", "removed"]]);
    expect(compareSummaries(before, onlySafe).map((c) => [c.config, c.kind])).toEqual([["unsafe", "added"]]);
  });
});

describe("observed configurations and the table by lock client", () => {
  const observed = parseMatrix(
    JSON.stringify({
      name: "libs",
      configurations: ["pause", "latency"].flatMap((nemesis) =>
        ["on", "off"].map((fence) => ({ name: `lib-${nemesis}-${fence}`, options: { client: "redis", nemesis, fence }, expect: "observe" })),
      ),
    }),
    "libs.json",
    "libs",
  );
  const planOf = (): SoakPlan => ({ ...plan(1), matrix: { name: "libs", source: "libs.json", hash: observed.hash, configurations: observed.configurations }, runs: observed.configurations.map((c) => ({ config: c.name, index: 0, seed: 0, argv: [] })) });
  const summaryOf = (records: RunRecord[]) => summarize({ plan: planOf(), records, notRun: [], finished: new Date(0), wallS: 1, interrupted: false, diskBytes: 0 });

  it("an observed configuration is neither met nor missed, says what showed, and does not fail the soak", () => {
    const s = summaryOf([rec("lib-pause-on", 0, "valid"), rec("lib-pause-off", 0, "invalid", [SWA]), rec("lib-latency-on", 0, "valid"), rec("lib-latency-off", 0, "valid")]);
    expect(s.exit_code).toBe(0);
    expect(s.configurations.map((c) => c.expectation)).toEqual(["observed", "observed", "observed", "observed"]);
    expect(s.configurations[1].why).toBe(`${SWA} in 1 of 1 runs`);
    expect(s.verdict).toBe("OBSERVED: 4 configurations run, no claim made for any");
    expect(s.configurations[0].options).toEqual({ client: "redis", nemesis: "pause", fence: "on" });
  });

  it("groups by client: fencing off lists each anomaly with its fault, fencing on is safe only when every run was valid", () => {
    const safe = libraryRows(summaryOf([rec("lib-pause-on", 0, "valid"), rec("lib-pause-off", 0, "invalid", [SWA]), rec("lib-latency-on", 0, "valid"), rec("lib-latency-off", 0, "invalid", [SWA])]).configurations);
    expect(safe).toHaveLength(1);
    expect(safe[0].unfenced).toEqual({ [SWA]: ["pause 1/1", "latency 1/1"] });
    expect(fencingText(safe[0])).toMatch(/^safe: 2\/2 runs valid/);
    const unsafe = libraryRows(summaryOf([rec("lib-pause-on", 0, "invalid", ["mutex-violation"]), rec("lib-pause-off", 0, "valid"), rec("lib-latency-on", 0, "valid"), rec("lib-latency-off", 0, "valid")]).configurations);
    expect(unsafe[0].unfenced).toEqual({});
    expect(fencingText(unsafe[0])).toMatch(/^resource safe \(no write anomaly in 2 runs, a stale write refused in \d+\), but the lock still shows mutex-violation \(pause 1\/1\)$/);
    const broken = libraryRows(summaryOf([rec("lib-pause-on", 0, "invalid", [SWA]), rec("lib-pause-off", 0, "valid"), rec("lib-latency-on", 0, "valid"), rec("lib-latency-off", 0, "valid")]).configurations);
    expect(fencingText(broken[0])).toBe(`NOT safe: ${SWA} (pause 1/1); 1/2 runs valid`);
  });

  it("tells you it lost the lock: from the runs' lost_holds, yes with how many and how soon, no, or '-' when no run could tell", () => {
    const told = (r: RunRecord, holds: number, n: number, p50: number | null): RunRecord => ({ ...r, lost_holds: { holds, told: n, told_after_p50_ms: p50 } });
    const [yes] = libraryRows(summaryOf([told(rec("lib-pause-on", 0, "valid"), 4, 4, 900), told(rec("lib-pause-off", 0, "invalid", [SWA]), 3, 2, 1300)]).configurations);
    expect(yes.tells).toEqual({ holds: 7, told: 6, medianMs: 900 });
    expect(tellsText(yes)).toBe("yes, 6 of 7 lost holds, median 900 ms after");
    const [no] = libraryRows(summaryOf([told(rec("lib-pause-on", 0, "valid"), 2, 0, null), told(rec("lib-pause-off", 0, "invalid", [SWA]), 3, 0, null)]).configurations);
    expect(tellsText(no)).toBe("no (0 of 5 lost holds)");
    const [unknown] = libraryRows(summaryOf([rec("lib-pause-on", 0, "valid"), rec("lib-pause-off", 0, "invalid", [SWA])]).configurations);
    expect(unknown.tells).toBeNull();
    expect(tellsText(unknown)).toBe("-");
  });

  it("a configuration that breaks the lock on purpose (expected to find an anomaly) stays off the fencing-on side", () => {
    // As the nightly preset has it: Redis fenced under pauses, unfenced, and fenced but killed without persistence.
    const m = parseMatrix(
      JSON.stringify({
        name: "mixed",
        configurations: [
          { name: "pause-on", options: { client: "redis", nemesis: "pause", fence: "on" }, expect: "valid" },
          { name: "pause-off", options: { client: "redis", nemesis: "pause", fence: "off" }, expect: { find: { [SWA]: 0.9 } } },
          { name: "kill-on", options: { client: "redis", nemesis: "kill", fence: "on" }, expect: { find: { "duplicate-fence": 0.9 } } },
        ],
      }),
      "mixed.json",
      "mixed",
    );
    const p: SoakPlan = { ...plan(1), matrix: { name: "mixed", source: "mixed.json", hash: m.hash, configurations: m.configurations }, runs: m.configurations.map((c) => ({ config: c.name, index: 0, seed: 0, argv: [] })) };
    const s = summarize({ plan: p, records: [rec("pause-on", 0, "valid"), rec("pause-off", 0, "invalid", [SWA]), rec("kill-on", 0, "invalid", ["duplicate-fence"])], notRun: [], finished: new Date(0), wallS: 1, interrupted: false, diskBytes: 0 });
    const [row] = libraryRows(s.configurations);
    expect(row.faults).toEqual(["pause"]);
    expect(row.fencedRuns).toBe(1);
    expect(fencingText(row)).toMatch(/^safe: 1\/1 runs valid/);
  });
});
