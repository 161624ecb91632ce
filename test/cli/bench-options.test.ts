// bench:checker, bench:run-cost and bench:suite-cpu refuse what they cannot time with exit 254
// and a message naming the option, before generating or timing anything; and
// bench:run-cost's phases, read from what a run recorded, add up to its time.
import { describe, it, expect } from "vitest";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { tempRunDir } from "../helpers.ts";

const bench = (args: string[]) =>
  spawnSync(process.execPath, ["dist/bench/checker.js", ...args], { cwd: join(import.meta.dirname, "../.."), encoding: "utf8", timeout: 60_000 });

describe("bench:checker options", () => {
  it("--dir that holds no run: 254, naming the directory", () => {
    const empty = tempRunDir("fc-bench-");
    const r = bench(["--dir", empty]);
    expect(r.status).toBe(254);
    expect(r.stderr).toContain(`--dir ${empty}: no history.ndjson there`);
  });

  it("--events below the minimum: 254", () => {
    const r = bench(["--events", "5"]);
    expect(r.status).toBe(254);
    expect(r.stderr).toMatch(/--events must be at least 1000/);
  });

  it("--shape other than few-keys, many-keys or both: 254, naming the option", () => {
    const r = bench(["--shape", "some-keys"]);
    expect(r.status).toBe(254);
    expect(r.stderr).toContain(`--shape: unknown value "some-keys"; choose from few-keys, many-keys, both`);
  });
});

describe("bench:protocol", () => {
  const protocol = (args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", "bench/protocol.ts", ...args], { cwd: join(import.meta.dirname, "../.."), encoding: "utf8", timeout: 120_000 });

  it("--cycles below the minimum: 254, naming the option", () => {
    const r = protocol(["--cycles", "3"]);
    expect(r.status).toBe(254);
    expect(r.stderr).toMatch(/--cycles must be at least 10/);
  });

  it("prints both paths and what the protocol adds per operation", () => {
    const r = protocol(["--cycles", "40", "--json"]);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.inProcess.cycles).toBe(40);
    expect(report.protocol.cycles).toBe(40);
    expect(report.addedPerOperationMs.median).toBeCloseTo((report.protocol.medianMs - report.inProcess.medianMs) / 2, 9);
  });
});

const runCost = (args: string[]) =>
  spawnSync(process.execPath, ["dist/bench/run-cost.js", ...args], { cwd: join(import.meta.dirname, "../.."), encoding: "utf8", timeout: 60_000 });

describe("bench:run-cost", () => {
  it("refuses a backend it does not know, and a checkout with no build, with 254 and the option's name", () => {
    const bogus = runCost(["--backends", "redis,mongo"]);
    expect(bogus.status).toBe(254);
    expect(bogus.stderr).toContain(`--backends: unknown value "mongo"`);
    const empty = tempRunDir("fc-bench-");
    const unbuilt = runCost(["--checkout", empty]);
    expect(unbuilt.status).toBe(254);
    expect(unbuilt.stderr).toContain(`--checkout ${empty}: no dist/cli/fencecheck.js there`);
  });

  it("splits a run's whole time into its phases, from what the run recorded", () => {
    const r = runCost(["--backends", "lockserver", "--runs", "1", "--time-limit", "1", "--json"]);
    expect(r.status, r.stderr).toBe(0);
    const f = JSON.parse(r.stdout) as { runs: Array<{ wall_ms: number; fixed_ms: number; phases: Record<string, number | null> }> };
    const [run] = f.runs;
    expect(run.fixed_ms).toBeCloseTo(run.wall_ms - 1000, 0);
    const phases = Object.values(run.phases);
    expect(phases).toHaveLength(10);
    // Every phase was recorded, none ran backwards, and together they are the run's wall time.
    for (const ms of phases) expect(ms).toBeGreaterThanOrEqual(0);
    expect(phases.reduce((a, b) => a! + b!, 0)).toBeCloseTo(run.wall_ms, -1);
    // The time limit, give or take a timer's millisecond.
    expect(run.phases.operations).toBeGreaterThan(990);
  });
});

const suiteCpu = (args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", "bench/suite-cpu.ts", ...args], { cwd: join(import.meta.dirname, "../.."), encoding: "utf8", timeout: 120_000 });

describe("bench:suite-cpu", () => {
  it("refuses a config that is none of the tiers', and a --top below 1, with 254 and the option's name", () => {
    const config = suiteCpu(["--config", "vite.config.ts"]);
    expect(config.status).toBe(254);
    expect(config.stderr).toContain(`--config: unknown value "vite.config.ts"`);
    const unknown = suiteCpu(["--top", "0"]);
    expect(unknown.status).toBe(254);
    expect(unknown.stderr).toContain("--top must be at least 1");
  });

  it("lists each file it ran with the CPU its fork spent, vitest's worker start and the file's imports included", () => {
    const r = suiteCpu(["--json", "test/lib/address.test.ts"]);
    expect(r.status, r.stderr).toBe(0);
    const f = JSON.parse(r.stdout) as { vitest_exit: number; vitest: string; files: Array<{ file: string; cpu_s: number }> };
    expect(f.vitest_exit).toBe(0);
    expect(f.vitest).toMatch(/passed/);
    // A fork starting vitest's worker and importing the file costs a tenth of a CPU-second at least.
    expect(f.files.map((x) => x.file)).toEqual(["test/lib/address.test.ts"]);
    expect(f.files[0].cpu_s).toBeGreaterThan(0.1);
  });
});
