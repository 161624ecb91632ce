// bench:checker, bench:run-cost and bench:suite-cpu refuse what they cannot time with exit 254
// and a message naming the option, before generating or timing anything; and
// bench:run-cost's phases, read from what a run recorded, add up to its time.
import { describe, it, expect } from "vitest";
import { runNode, tempRunDir } from "../helpers.ts";

const bench = (args: string[]) => runNode(["dist/bench/checker.js", ...args], 60_000);

describe("bench:checker options", () => {
  it("--dir that holds no run: 254, naming the directory", async () => {
    const empty = tempRunDir("fc-bench-");
    const r = await bench(["--dir", empty]);
    expect(r.status).toBe(254);
    expect(r.stderr).toContain(`--dir ${empty}: no history.ndjson there`);
  });

  it("--events below the minimum: 254", async () => {
    const r = await bench(["--events", "5"]);
    expect(r.status).toBe(254);
    expect(r.stderr).toMatch(/--events must be at least 1000/);
  });

  it("--shape other than few-keys, many-keys or both: 254, naming the option", async () => {
    const r = await bench(["--shape", "some-keys"]);
    expect(r.status).toBe(254);
    expect(r.stderr).toContain(`--shape: unknown value "some-keys"; choose from few-keys, many-keys, both`);
  });
});

describe("bench:protocol", () => {
  const protocol = (args: string[]) => runNode(["--import", "tsx", "bench/protocol.ts", ...args], 120_000);

  it("--cycles below the minimum: 254, naming the option", async () => {
    const r = await protocol(["--cycles", "3"]);
    expect(r.status).toBe(254);
    expect(r.stderr).toMatch(/--cycles must be at least 10/);
  });

  it("prints both paths and what the protocol adds per operation", async () => {
    const r = await protocol(["--cycles", "40", "--json"]);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.inProcess.cycles).toBe(40);
    expect(report.protocol.cycles).toBe(40);
    expect(report.addedPerOperationMs.median).toBeCloseTo((report.protocol.medianMs - report.inProcess.medianMs) / 2, 9);
  });
});

const runCost = (args: string[]) => runNode(["dist/bench/run-cost.js", ...args], 60_000);

describe("bench:run-cost", () => {
  it("refuses a backend it does not know, and a checkout with no build, with 254 and the option's name", async () => {
    const bogus = await runCost(["--backends", "redis,mongo"]);
    expect(bogus.status).toBe(254);
    expect(bogus.stderr).toContain(`--backends: unknown value "mongo"`);
    const empty = tempRunDir("fc-bench-");
    const unbuilt = await runCost(["--checkout", empty]);
    expect(unbuilt.status).toBe(254);
    expect(unbuilt.stderr).toContain(`--checkout ${empty}: no dist/cli/fencecheck.js there`);
  });

  it("splits a run's whole time into its phases, from what the run recorded", async () => {
    const r = await runCost(["--backends", "lockserver", "--runs", "1", "--time-limit", "1", "--json"]);
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

const suiteCpu = (args: string[]) => runNode(["--import", "tsx", "bench/suite-cpu.ts", ...args], 120_000);

describe("bench:suite-cpu", () => {
  it("refuses a config that is none of the tiers', and a --top below 1, with 254 and the option's name", async () => {
    const config = await suiteCpu(["--config", "vite.config.ts"]);
    expect(config.status).toBe(254);
    expect(config.stderr).toContain(`--config: unknown value "vite.config.ts"`);
    const unknown = await suiteCpu(["--top", "0"]);
    expect(unknown.status).toBe(254);
    expect(unknown.stderr).toContain("--top must be at least 1");
  });

  it("lists each file it ran with the CPU its fork spent, vitest's worker start and the file's imports included", async () => {
    const r = await suiteCpu(["--json", "test/lib/address.test.ts"]);
    expect(r.status, r.stderr).toBe(0);
    const f = JSON.parse(r.stdout) as { vitest_exit: number; vitest: string; files: Array<{ file: string; cpu_s: number }> };
    expect(f.vitest_exit).toBe(0);
    expect(f.vitest).toMatch(/passed/);
    // A fork starting vitest's worker and importing the file costs a tenth of a CPU-second at least.
    expect(f.files.map((x) => x.file)).toEqual(["test/lib/address.test.ts"]);
    expect(f.files[0].cpu_s).toBeGreaterThan(0.1);
  });
});
