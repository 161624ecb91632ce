// Processes' CPU read from /proc (Linux): what the experiments sample to show the
// harness's own cost beside what they measure (experiments/proc.ts), and what
// bench:suite-cpu gives each test file.
import { readFileSync, readdirSync } from "node:fs";

/** USER_HZ: /proc counts CPU time in these ticks, 100 a second on every Linux. */
export const TICKS_PER_S = 100;

export interface ProcStat {
  ppid: number;
  /** utime + stime so far, in ticks. */
  ticks: number;
  /** The command name the kernel keeps (up to 15 characters). */
  name: string;
}

/** One process's parent, CPU so far and name; null once it is gone. */
export function procStat(pid: number): ProcStat | null {
  let s: string;
  try {
    s = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // The name is in parentheses and may hold spaces and parentheses; the fields after the last ")" are fixed.
  const close = s.lastIndexOf(")");
  const f = s.slice(close + 2).split(" ");
  return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]), name: s.slice(s.indexOf("(") + 1, close) };
}

/** Every process now, by pid (one that ends while the table is read is left out). */
export function procTable(): Map<number, ProcStat> {
  const all = new Map<number, ProcStat>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    const s = procStat(Number(d));
    if (s) all.set(Number(d), s);
  }
  return all;
}
