// lib/proc.ts reads processes' CPU from /proc, for the experiments' harness share
// and bench:suite-cpu: the ticks must be CPU time in hundredths of a second, the
// parent the real one, and a name with spaces and parentheses must not shift the
// fields after it.
import { describe, it, expect } from "vitest";
import { spawn } from "node:child_process";
import { copyFileSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { TICKS_PER_S, procStat, procTable } from "../../lib/proc.ts";
import { tempDir } from "../helpers.ts";

/** Spins until this process has used `ms` more CPU time (user + system). */
function spin(ms: number): void {
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const until = cpu() + ms;
  while (cpu() < until);
}

describe("lib/proc.ts", () => {
  it("counts this process's CPU in hundredths of a second, as process.cpuUsage does", () => {
    const before = procStat(process.pid)!;
    spin(500);
    const after = procStat(process.pid)!;
    // Half a second of CPU is 50 ticks; the ticks are whole and sampled, so a few either way.
    expect((after.ticks - before.ticks) / TICKS_PER_S).toBeGreaterThan(0.4);
    expect((after.ticks - before.ticks) / TICKS_PER_S).toBeLessThan(0.7);
    expect(after.ppid).toBe(process.ppid);
  });

  it("reads a name with spaces and parentheses whole, and the fields after it in place; a process gone is null", async () => {
    // The kernel's name for a process is its program file's: a copy of sleep named to trip a parser.
    const odd = join(tempDir("fc-proc-"), "a) b (c");
    copyFileSync("/bin/sleep", odd);
    chmodSync(odd, 0o755);
    const child = spawn(odd, ["30"], { stdio: "ignore" });
    await new Promise((r) => child.once("spawn", r));
    try {
      const s = procStat(child.pid!)!;
      expect(s).toMatchObject({ ppid: process.pid, name: "a) b (c" });
      expect(s.ticks).toBeGreaterThanOrEqual(0);
      const table = procTable();
      expect(table.get(child.pid!)).toMatchObject({ ppid: process.pid, name: "a) b (c" });
      expect(table.get(process.pid)?.ppid).toBe(process.ppid);
    } finally {
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    }
    expect(procStat(child.pid!)).toBeNull();
  });
});
