// CPU of a process tree, sampled from /proc while an experiment's run goes on:
// the harness's own cost (the runner and its workers), shown beside what it
// measures, so a curve that flattens can be told from a harness that saturated.
import { readFileSync, readdirSync } from "node:fs";

const TICKS_PER_S = 100; // USER_HZ on Linux

function stat(pid: number): { ppid: number; ticks: number; name: string } | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The name is in parentheses and may hold spaces; the fields after it are fixed.
    const close = s.lastIndexOf(")");
    const f = s.slice(close + 2).split(" ");
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]), name: s.slice(s.indexOf("(") + 1, close) };
  } catch {
    return null;
  }
}

/** Every process under `root`, itself included, with its CPU ticks so far. */
function tree(root: number): Map<number, number> {
  const all = new Map<number, { ppid: number; ticks: number }>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    const s = stat(Number(d));
    if (s) all.set(Number(d), s);
  }
  const out = new Map<number, number>();
  const walk = (pid: number): void => {
    const s = all.get(pid);
    if (!s || out.has(pid)) return;
    out.set(pid, s.ticks);
    for (const [child, c] of all) if (c.ppid === pid) walk(child);
  };
  walk(root);
  return out;
}

/** Samples the tree's CPU every `everyMs`; stop() gives the mean and peak share of one core it used. */
export function sampleCpu(root: number, everyMs = 500): { stop(): { mean_pct: number; peak_pct: number; samples: number } } {
  let last = tree(root);
  let lastAt = Date.now();
  const shares: number[] = [];
  const timer = setInterval(() => {
    const now = tree(root);
    const at = Date.now();
    let used = 0;
    for (const [pid, ticks] of now) used += ticks - (last.get(pid) ?? ticks);
    shares.push(((used / TICKS_PER_S) / ((at - lastAt) / 1000)) * 100);
    last = now;
    lastAt = at;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const mean = shares.length ? shares.reduce((a, b) => a + b, 0) / shares.length : 0;
      return { mean_pct: Math.round(mean), peak_pct: Math.round(Math.max(0, ...shares)), samples: shares.length };
    },
  };
}
