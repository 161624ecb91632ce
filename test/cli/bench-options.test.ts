// bench:checker refuses what it cannot time with exit 254 and a message naming the
// option, before generating or timing anything.
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
