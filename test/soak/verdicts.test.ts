// Real soaks of a few seconds per run against real Redis: a configuration given a
// wrong expectation makes the soak exit 1 and is named first; a second soak of the
// same matrix says what changed; a run that crashes (its server cannot bind) is
// recorded as crashed, the soak goes on to the next run and exits 255; a matrix
// test:jepsen would refuse is refused before anything runs.
import { describe, it, expect } from "vitest";
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { basename, join } from "node:path";
import { processesMentioning, readNdjson, runCli, tempRunDir } from "../helpers.ts";
import type { SoakSummary, RunRecord } from "../../soak/index.ts";

const SHORT = { backend: "redis", nemesis: "none", "time-limit": 2, concurrency: 2, workers: 1, work: 5 };

function writeMatrix(dir: string, file: string, configurations: unknown[]): string {
  const path = join(dir, file);
  writeFileSync(path, JSON.stringify({ name: "t", configurations }));
  return path;
}

function soakDirs(store: string): string[] {
  const root = join(store, "soaks");
  return readdirSync(root).filter((n) => n !== "latest").sort().map((n) => join(root, n));
}

const summaryOf = (dir: string): SoakSummary => JSON.parse(readFileSync(join(dir, "summary.json"), "utf8"));

describe("soak verdicts", () => {
  it("a wrong expectation exits 1 and is named first; summary.html links every run's report; a second soak says what changed", async () => {
    const store = tempRunDir("fc-soak-");
    const wrong = writeMatrix(store, "wrong.json", [
      { name: "right", options: SHORT, expect: "valid" },
      // Fencing on and no faults: nothing can be stale, so this expectation is wrong.
      { name: "wrong", options: SHORT, expect: { find: { "stale-write-accepted": 0.5 } } },
    ]);
    const first = runCli("soak", ["--matrix", wrong, "--jobs", "1", "--store", store, "--seed", "5"]);
    expect(await first.exit, first.stderr()).toBe(1);
    const out = first.stdout().trim().split("\n");
    expect(out[0]).toMatch(/^MISSED expectation: wrong\b/);
    expect(out[1]).toMatch(/^ {2}MISSED wrong: stale-write-accepted found in 0 of 1 runs/);
    expect(first.stdout()).toMatch(/No earlier soak of matrix t/);
    // One progress line per run, with its seed and verdict.
    expect(first.stderr()).toMatch(/\[1\/2 .*\] right #0 seed \d+: VALID/);
    expect(first.stderr()).toMatch(/\[2\/2 .*\] wrong #0 seed \d+: VALID/);

    const [dir] = soakDirs(store);
    expect(readlinkSync(join(store, "soaks", "latest"))).toBe(basename(dir));
    const s = summaryOf(dir);
    expect(s.exit_code).toBe(1);
    expect(s.configurations.map((c) => [c.name, c.expectation])).toEqual([
      ["right", "met"],
      ["wrong", "missed"],
    ]);
    // Each run is stored as test:jepsen stores it, and the page links its report.
    const html = readFileSync(join(dir, "summary.html"), "utf8");
    const reports = [...html.matchAll(/href="([^"]+\/report\.html)"/g)].map((m) => m[1]);
    expect(reports).toHaveLength(2);
    for (const href of reports) expect(existsSync(join(dir, decodeURIComponent(href))), href).toBe(true);
    for (const c of s.configurations) expect(existsSync(join(dir, c.runs[0].run_dir!, "history.ndjson"))).toBe(true);
    // Any run can be repeated alone: its seed is in the record and in the arguments.
    const r = s.configurations[0].runs[0];
    expect(r.argv).toContain(String(r.seed));

    const fixed = writeMatrix(store, "fixed.json", [
      { name: "right", options: SHORT, expect: "valid" },
      { name: "wrong", options: SHORT, expect: "valid" },
    ]);
    const second = runCli("soak", ["--matrix", fixed, "--jobs", "1", "--store", store, "--seed", "5", "--keep-runs", "1"]);
    expect(await second.exit, second.stderr()).toBe(0);
    expect(second.stdout()).toMatch(new RegExp(`Changed since soaks/${dir.split("/").at(-1)!.replace(/\./g, "\\.")}:\\n.*fixed +wrong meets its expectation`));
    const later = soakDirs(store)[1];
    expect(summaryOf(later).changes.map((c) => [c.config, c.kind])).toEqual([["wrong", "fixed"]]);
    expect(readFileSync(join(later, "summary.html"), "utf8")).toMatch(/fixed<\/span> wrong meets its expectation/);
    // --keep-runs 1: the first soak keeps its summary (still comparable) but not its runs; the newest keeps both.
    expect(existsSync(join(dir, "runs"))).toBe(false);
    expect(existsSync(join(dir, "output"))).toBe(false);
    expect(summaryOf(dir).runs_pruned).toBe(true);
    expect(readFileSync(join(dir, "summary.html"), "utf8")).toMatch(/removed by --keep-runs/);
    expect(existsSync(join(later, summaryOf(later).configurations[0].runs[0].run_dir!, "history.ndjson"))).toBe(true);
    expect(processesMentioning(store)).toEqual([]);
  });

  it("--time-budget: runs go round-robin, and those that would not fit are reported as not run", async () => {
    const store = tempRunDir("fc-soak-");
    const matrix = writeMatrix(store, "budget.json", ["a", "b", "c"].map((name) => ({ name, options: SHORT, expect: "valid" })));
    const started = Date.now();
    const soak = runCli("soak", ["--matrix", matrix, "--jobs", "1", "--store", store, "--test-count", "4", "--time-budget", "25"]);
    expect(await soak.exit, soak.stderr()).toBe(0);
    const s = summaryOf(soakDirs(store)[0]);
    const ran = s.configurations.map((c) => c.runs.length);
    const notRun = s.configurations.flatMap((c) => c.not_run);
    expect(ran.reduce((x, y) => x + y, 0) + notRun.length).toBe(12);
    expect(notRun.length).toBeGreaterThan(0);
    for (const r of notRun) expect(r.reason).toMatch(/did not fit the time budget: \d+ s of 25 s left(, about \d+ s needed| after a run of round \d+ did not fit)/);
    // Round-robin: the budget is shared, so no configuration has two runs more than another,
    // and no run of a round starts before every run of the round before it has started or
    // been found not to fit (a shorter configuration may still fit where a longer one of the
    // same round did not). A loaded machine may fit fewer than three runs in 25 s, so how
    // many ran is not asserted: that every configuration gets one is not what a budget promises.
    expect(Math.max(...ran) - Math.min(...ran)).toBeLessThanOrEqual(1);
    const rounds = readNdjson(join(soakDirs(store)[0], "runs.ndjson")).map((r) => r.index as number);
    expect(rounds.length).toBeGreaterThan(0);
    expect(rounds).toEqual([...rounds].sort((x, y) => x - y));
    expect(soak.stdout()).toMatch(/Not run \(\d+\):\n {2}\w #\d \(seed \d+\): did not fit the time budget/);
    // A run is started only when its estimate fits, so the soak ends near its budget, not far past it.
    expect((Date.now() - started) / 1000).toBeLessThan(25 + 15);
  });

  it("a run that crashes is recorded with its error, the soak goes on, and exits 255", async () => {
    const store = tempRunDir("fc-soak-");
    // A port taken by someone else: the run's first server cannot bind it.
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    const port = (taken.address() as { port: number }).port;
    try {
      const matrix = writeMatrix(store, "crash.json", [
        { name: "crashes", options: { ...SHORT, "port-base": port }, expect: "valid" },
        { name: "after", options: SHORT, expect: "valid" },
      ]);
      const soak = runCli("soak", ["--matrix", matrix, "--jobs", "1", "--store", store]);
      expect(await soak.exit, soak.stderr()).toBe(255);
      expect(soak.stdout()).toMatch(/^CRASHED runs in crashes/);
      expect(soak.stdout()).toMatch(/CRASHED crashes #0 \(seed \d+\): fencecheck test exited 255/);
      const records: RunRecord[] = readFileSync(join(soakDirs(store)[0], "runs.ndjson"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
      expect(records.map((r) => [r.config, r.status])).toEqual([
        ["crashes", "crashed"],
        ["after", "valid"],
      ]);
      expect(records[0].exit_code).toBe(255);
      expect(records[0].error).toMatch(/exited 255: /);
    } finally {
      taken.close();
    }
    expect(processesMentioning(store)).toEqual([]);
  });

  it("a matrix with an option test:jepsen does not know is refused (254) naming the configuration and the option; nothing runs", async () => {
    const store = tempRunDir("fc-soak-");
    const matrix = writeMatrix(store, "bad.json", [
      { name: "fine", options: SHORT, expect: "valid" },
      { name: "typo", options: { ...SHORT, "nemesis-intervall": 2 }, expect: "valid" },
    ]);
    const soak = runCli("soak", ["--matrix", matrix, "--jobs", "1", "--store", store]);
    expect(await soak.exit).toBe(254);
    expect(soak.stderr()).toMatch(/configuration "typo": unknown option "nemesis-intervall"/);
    expect(existsSync(join(store, "soaks"))).toBe(false);
    const badPreset = runCli("soak", ["--preset", "weekly", "--store", store]);
    expect(await badPreset.exit).toBe(254);
    expect(badPreset.stderr()).toMatch(/--preset: unknown value "weekly"/);
    const bothOrNone = runCli("soak", ["--store", store]);
    expect(await bothOrNone.exit).toBe(254);
    expect(bothOrNone.stderr()).toMatch(/give one of --preset/);
  });
});
