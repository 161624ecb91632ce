// A soak split over machines (--shard I/N) and merged (--merge): the split is a
// partition of the plan's (configuration, run index) pairs for any N, and two
// real shards of a small matrix, merged, are the soak one machine would have run
// with the same seed: the same runs, seeds, verdicts, counts and exit code. A
// merge refuses what is not the shards of one soak (254, naming the directory,
// writing nothing), reports a missing shard (exit 2, INCOMPLETE), and takes a
// shard killed before its summary as --summarize would, without touching it.
import { describe, it, expect, afterAll, beforeAll } from "vitest";
import { cpSync, existsSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseSoakArgs } from "../../cli/soak-options.ts";
import { loadPreset, plannedPairs, readSummary, type SoakSummary } from "../../soak/index.ts";
import { runCli, tempRunDir } from "../helpers.ts";

describe("the split of a soak's runs over shards", () => {
  it("is a partition of the plan's (configuration, run index) pairs, in shares that differ by one run at most, and spreads a configuration's runs", () => {
    for (const preset of ["nightly", "detection"]) {
      const configurations = loadPreset(preset).configurations;
      for (const testCount of [1, 3])
        for (const n of [1, 2, 3, 5, 6, 7]) {
          const whole = plannedPairs(configurations, testCount, null).map((p) => `${p.config.name}#${p.index}`);
          const shares = Array.from({ length: n }, (_, i) => plannedPairs(configurations, testCount, { index: i + 1, count: n }).map((p) => `${p.config.name}#${p.index}`));
          const all = shares.flat();
          expect(all, `${preset} x${testCount} over ${n}`).toHaveLength(whole.length);
          expect(new Set(all).size).toBe(whole.length);
          expect([...all].sort()).toEqual([...whole].sort());
          const sizes = shares.map((s) => s.length);
          expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
          // Within a share, the soak's own order: run 0 of every configuration before run 1 of any.
          for (const s of shares) expect(s).toEqual(whole.filter((p) => s.includes(p)));
        }
    }
    // Pairs, not configurations: 42 configurations over 6 machines does not give each machine 7 configurations whole.
    const nightly = loadPreset("nightly").configurations;
    const machinesOf = new Map<string, Set<number>>();
    for (let i = 1; i <= 6; i++) for (const p of plannedPairs(nightly, 3, { index: i, count: 6 })) machinesOf.set(p.config.name, (machinesOf.get(p.config.name) ?? new Set()).add(i));
    expect([...machinesOf.values()].filter((m) => m.size > 1).length).toBeGreaterThan(nightly.length / 2);
  });

  it("--shard is I/N with 1 <= I <= N, needs --seed, and is refused where a shard would have no run or where it would be compared", () => {
    const parse = (...args: string[]) => parseSoakArgs(["--preset", "smoke", ...args]).request;
    expect(parse("--shard", "2/3", "--seed", "7")).toMatchObject({ kind: "run", shard: { index: 2, count: 3 }, seed: 7 });
    expect(parse("--seed", "7")).toMatchObject({ shard: null });
    expect(() => parse("--shard", "1/2")).toThrow(/--shard 1\/2 needs --seed: the shards of one soak must share a seed/);
    expect(() => parse("--shard", "0/2", "--seed", "1")).toThrow(/--shard 0\/2: the share must be 1 to 2, got 0/);
    expect(() => parse("--shard", "3/2", "--seed", "1")).toThrow(/--shard 3\/2: the share must be 1 to 2, got 3/);
    expect(() => parse("--shard", "2", "--seed", "1")).toThrow(/--shard must be I\/N/);
    // smoke: 5 configurations x 1 run.
    expect(() => parse("--shard", "1/6", "--seed", "1")).toThrow(/--shard 1\/6: the soak has 5 runs, so 6 shards would leave some with none/);
    expect(() => parseSoakArgs(["--merge", "a", "b", "--seed", "1"])).toThrow(/--merge runs nothing \(the shards ran\), so --seed means nothing with it/);
    expect(parseSoakArgs(["--merge", "a", "b", "--store", "s"]).request).toEqual({ kind: "merge", dirs: ["a", "b"], store: "s", compare: null, keepRuns: null });
    expect(() => parseSoakArgs(["--preset", "smoke", "a"])).toThrow(/unexpected argument "a"/);
  });
});

describe("two shards of a soak, merged", () => {
  // Two configurations x two runs, a second of Redis with no faults each. The
  // names deal one run of each configuration to each shard (pairs, not
  // configurations); the unfenced one expects an anomaly no run without faults
  // shows, so the soak misses an expectation and exits 1, whole or merged.
  const MATRIX = {
    name: "shard-test",
    configurations: [
      { name: "valid-fenced", options: { backend: "redis", nemesis: "none", "time-limit": 1, fence: "on", concurrency: 2, workers: 1 }, expect: "valid" },
      { name: "missed-unfenced", options: { backend: "redis", nemesis: "none", "time-limit": 1, fence: "off", concurrency: 2, workers: 1 }, expect: { find: { "stale-write-accepted": 0.5 } } },
    ],
  };
  const SEED = "11";
  let root = "";
  let matrix = "";
  const shardDir: string[] = [];
  let whole: SoakSummary;
  let wholeExit: number | null = null;
  const soaks = (store: string): string[] => (existsSync(join(store, "soaks")) ? readdirSync(join(store, "soaks")).filter((n) => n !== "latest").sort() : []);
  const summaryOf = (dir: string): SoakSummary => JSON.parse(readFileSync(join(dir, "summary.json"), "utf8"));
  /** What a soak proves, without its timings or paths. */
  const verdicts = (s: SoakSummary) =>
    s.configurations.map((c) => ({ name: c.name, planned: c.planned, counts: c.counts, expectation: c.expectation, runs: c.runs.map((r) => ({ index: r.index, seed: r.seed, status: r.status })) }));

  beforeAll(async () => {
    root = tempRunDir("fc-soak-shard-");
    matrix = join(root, "m.json");
    writeFileSync(matrix, JSON.stringify(MATRIX));
    const soak = (store: string, ...extra: string[]) => runCli("soak", ["--matrix", matrix, "--jobs", "1", "--test-count", "2", "--seed", SEED, "--store", join(root, store), ...extra]);
    // The two shards and the whole soak side by side, as CI's machines would run them.
    const runs = [soak("s1", "--shard", "1/2"), soak("s2", "--shard", "2/2"), soak("whole")];
    const codes = await Promise.all(runs.map((r) => r.exit));
    for (const [i, r] of runs.entries()) expect(codes[i], r.stderr()).toBe(1);
    expect(runs[0].stderr()).toMatch(/shard 1\/2: 2 of 4 runs, seed 11/);
    expect(runs[0].stdout()).toMatch(/seed 11, shard 1\/2, exit 1/);
    for (const s of ["s1", "s2"]) shardDir.push(join(root, s, "soaks", soaks(join(root, s))[0]));
    const wholeDir = join(root, "whole", "soaks", soaks(join(root, "whole"))[0]);
    whole = summaryOf(wholeDir);
    wholeExit = codes[2];
  }, 60_000);
  afterAll(() => void (root && rmSync(root, { recursive: true, force: true })));

  it("each shard runs its share, records it, and is compared with nothing; the merge is the whole soak: the same runs, seeds, verdicts and exit code", async () => {
    const shares = shardDir.map(summaryOf);
    // A soak directory named through its store's `latest` link, as the docs and the workflow name them.
    expect(readSummary(join(root, "s1", "soaks", "latest"), "--merge").shard).toEqual({ index: 1, count: 2 });
    expect(shares.map((s) => s.shard)).toEqual([{ index: 1, count: 2 }, { index: 2, count: 2 }]);
    expect(JSON.parse(readFileSync(join(shardDir[0], "soak.json"), "utf8")).shard).toEqual({ index: 1, count: 2 });
    // One run of each configuration on each machine.
    for (const s of shares) expect(s.configurations.map((c) => c.runs.length)).toEqual([1, 1]);

    const store = join(root, "merged");
    const merged = runCli("soak", ["--merge", shardDir[1], shardDir[0], "--store", store]);
    expect(await merged.exit, merged.stderr()).toBe(wholeExit);
    expect(merged.stdout()).toMatch(/^MISSED expectation: missed-unfenced .*merged from shards 1, 2 of 2, exit 1\)/);
    const dir = realpathSync(join(store, "soaks", "latest"));
    const s = summaryOf(dir);
    expect(verdicts(s)).toEqual(verdicts(whole));
    expect(s.seed).toBe(whole.seed);
    expect(s.verdict).toBe(whole.verdict);
    expect(s.merged).toMatchObject({ count: 2, missing: [], shards: [{ index: 1, dir: shardDir[0] }, { index: 2, dir: shardDir[1] }] });
    // Self-contained: every run's report and output were copied in, where the summary's links point.
    for (const r of s.configurations.flatMap((c) => c.runs)) {
      expect(existsSync(join(dir, r.run_dir!, "report.html")), r.run_dir!).toBe(true);
      expect(existsSync(join(dir, r.output))).toBe(true);
      expect(readFileSync(join(dir, "summary.html"), "utf8")).toContain(`href="${r.run_dir}/report.html"`);
    }
    expect(readFileSync(join(dir, "runs.ndjson"), "utf8").trim().split("\n")).toHaveLength(4);

    // The next night's merge compares with this one, as one soak does with the last.
    const again = runCli("soak", ["--merge", shardDir[0], shardDir[1], "--store", store]);
    expect(await again.exit).toBe(1);
    expect(again.stdout()).toContain(`No change since soaks/${dir.split("/").pop()}.`);
  });

  it("refuses what is not the shards of one soak, naming the directory, and writes nothing", async () => {
    const store = join(root, "refused");
    const sameShard = join(root, "copy-of-shard-1");
    cpSync(shardDir[0], sameShard, { recursive: true });
    const otherSeed = join(root, "other-seed");
    cpSync(shardDir[1], otherSeed, { recursive: true });
    const plan = JSON.parse(readFileSync(join(otherSeed, "soak.json"), "utf8"));
    plan.options.seed = 12;
    writeFileSync(join(otherSeed, "soak.json"), JSON.stringify(plan));
    const wholeSoak = join(root, "whole", "soaks", soaks(join(root, "whole"))[0]);
    const cases: Array<[string[], RegExp]> = [
      [[shardDir[0], root], new RegExp(`--merge: ${root} is not a soak directory: it has no soak\\.json`)],
      [[shardDir[0], otherSeed], new RegExp(`--merge: ${otherSeed} is not a shard of the same soak as ${shardDir[0]}: its seed is 12, against 11`)],
      [[shardDir[0], sameShard], new RegExp(`--merge: ${shardDir[0]} and ${sameShard} are both shard 1/2; give each shard once`)],
      [[wholeSoak], new RegExp(`--merge: ${wholeSoak} is a whole soak \\(it ran without --shard\\)`)],
      [[], /--merge needs the soak directories of the shards/],
    ];
    for (const [dirs, message] of cases) {
      const cli = runCli("soak", ["--merge", ...dirs, "--store", store]);
      expect(await cli.exit, cli.stderr()).toBe(254);
      expect(cli.stderr()).toMatch(message);
    }
    expect(existsSync(store)).toBe(false);
    // A shard is not compared: the merge is.
    expect(() => parseSoakArgs(["--matrix", matrix, "--shard", "1/2", "--seed", SEED, "--compare", shardDir[0]])).toThrow(/--compare means nothing with --shard/);
  });

  it("a missing shard: merged all the same, its runs not run, INCOMPLETE, exit 2", async () => {
    const cli = runCli("soak", ["--merge", shardDir[0], "--store", join(root, "partial")]);
    expect(await cli.exit, cli.stderr()).toBe(2);
    expect(cli.stderr()).toMatch(/shard 2\/2 is missing: no directory of it was given; its 2 runs are counted not run/);
    const s = summaryOf(realpathSync(join(root, "partial", "soaks", "latest")));
    expect(s.verdict).toMatch(/^INCOMPLETE: shard 2 of 2 missing/);
    expect(s.merged!.missing).toEqual([2]);
    const notRun = s.configurations.flatMap((c) => c.not_run);
    const second = summaryOf(shardDir[1]).configurations.flatMap((c) => c.runs);
    expect(notRun.map((r) => `${r.config}#${r.index} seed ${r.seed}`).sort()).toEqual(second.map((r) => `${r.config}#${r.index} seed ${r.seed}`).sort());
    expect(notRun.every((r) => /^shard 2\/2 was not merged/.test(r.reason))).toBe(true);
  });

  it("a shard killed before its summary: its finished runs merged, the run it was in checked in the merged copy, the shard's directory untouched", async () => {
    const killed = join(root, "killed-shard-2");
    cpSync(shardDir[1], killed, { recursive: true });
    // As a CI time-out leaves it: no summary, the last run without its record or its verdict.
    rmSync(join(killed, "summary.json"));
    rmSync(join(killed, "summary.html"));
    const lines = readFileSync(join(killed, "runs.ndjson"), "utf8").trim().split("\n");
    const last = JSON.parse(lines.pop()!);
    writeFileSync(join(killed, "runs.ndjson"), lines.join("\n") + "\n");
    rmSync(join(killed, last.run_dir, "results.json"));
    const before = readdirSync(killed, { recursive: true }).sort();

    const cli = runCli("soak", ["--merge", shardDir[0], killed, "--store", join(root, "after-kill")]);
    expect(await cli.exit, cli.stderr()).toBe(1);
    expect(cli.stderr()).toMatch(new RegExp(`${last.config} #${last.index}: the soak stopped during this run; checking the history it left`));
    const s = summaryOf(realpathSync(join(root, "after-kill", "soaks", "latest")));
    expect(verdicts(s)).toEqual(verdicts(whole));
    const rerun = s.configurations.flatMap((c) => c.runs).find((r) => r.config === last.config && r.index === last.index)!;
    expect(rerun.incomplete).toBe(true);
    expect(readdirSync(killed, { recursive: true }).sort()).toEqual(before);
    expect(existsSync(join(killed, last.run_dir, "results.json"))).toBe(false);
  });
});
