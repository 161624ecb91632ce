// bench:suite-cpu's attribution (bench/suite-cpu-attribute.ts) on a hand-made
// process table: a run's servers and programs, however deep under a fork, count
// for the file that fork runs; the forks' own CPU is left to the probe; the rest
// is elsewhere.
import { describe, it, expect } from "vitest";
import { attribute } from "../../bench/suite-cpu-attribute.ts";
import type { ProcStat } from "../../lib/proc.ts";

const proc = (ppid: number, ticks: number): ProcStat => ({ ppid, ticks, name: "x" });

describe("bench:suite-cpu's attribution", () => {
  it("gives descendants' ticks since the last sample to their fork's file, and the others to elsewhere", () => {
    const table = new Map<number, ProcStat>([
      [10, proc(1, 500)], // vitest's main process: elsewhere
      [20, proc(10, 300)], // fork running a.test.ts: its own ticks are the probe's
      [21, proc(20, 40)], // the run's CLI under it
      [22, proc(21, 70)], // a worker under the CLI
      [30, proc(10, 100)], // fork between files
      [31, proc(30, 5)],
      [40, proc(1, 9)], // another session's process
    ]);
    const seen = new Map([[10, 450], [21, 10], [22, 60], [40, 0]]);
    const r = attribute(table, seen, new Set([20, 30]), new Map([[20, "a.test.ts"]]));
    // 21 spent 30 since the last sample and 22, two levels down, 10; 31 was not seen before: all its 5.
    expect([...r.files]).toEqual([["a.test.ts", 40], ["(between files)", 5]]);
    // 10's 50 and 40's 9; the forks' 300 and 100 nowhere.
    expect(r.elsewhere).toBe(59);
  });
});
