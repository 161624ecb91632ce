// CPU of a process tree, sampled from /proc while an experiment's run goes on:
// the harness's own cost (the runner and its workers), shown beside what it
// measures, so a curve that flattens can be told from a harness that saturated,
// and the lock servers' apart.
import { TICKS_PER_S, procStat, procTable } from "../lib/proc.ts";

/** utime + stime of one process so far, in seconds (0 once it is gone). */
export function cpuSeconds(pid: number): number {
  return (procStat(pid)?.ticks ?? 0) / TICKS_PER_S;
}

/**
 * The lock servers a run starts, by their process name: measured apart from the
 * harness. ZooKeeper's servers are `java` (the harness is node), and a Postgres
 * server's backends are `postgres` too.
 */
const SERVER = /^(redis-server|etcd|java|postgres|pgbouncer)$/;

/** Every process under `root`, itself included, with its CPU ticks so far and whether it is a lock server. */
function tree(root: number): Map<number, { ticks: number; server: boolean }> {
  const all = procTable();
  const out = new Map<number, { ticks: number; server: boolean }>();
  const walk = (pid: number): void => {
    const s = all.get(pid);
    if (!s || out.has(pid)) return;
    out.set(pid, { ticks: s.ticks, server: SERVER.test(s.name) });
    for (const [child, c] of all) if (c.ppid === pid) walk(child);
  };
  walk(root);
  return out;
}

export interface CpuShare {
  mean_pct: number;
  peak_pct: number;
  samples: number;
}

/**
 * Samples the tree's CPU every `everyMs`. stop() gives the mean and peak share of
 * one core the harness used (the runner, its workers, the resource and the fault
 * proxy), and apart from it the lock servers' (which the runner starts, so they
 * are in its tree too): a harness that saturated and a server that did look alike
 * on a flattening curve.
 */
export function sampleCpu(root: number, everyMs = 500): { stop(): CpuShare & { servers: CpuShare } } {
  let last = tree(root);
  let lastAt = Date.now();
  const harness: number[] = [];
  const servers: number[] = [];
  const timer = setInterval(() => {
    const now = tree(root);
    const at = Date.now();
    const used = { harness: 0, servers: 0 };
    // A process the last sample did not see started since: all its ticks are
    // this interval's (counting none lost a lock server's first busy half-second).
    for (const [pid, p] of now) used[p.server ? "servers" : "harness"] += p.ticks - (last.get(pid)?.ticks ?? 0);
    const seconds = (at - lastAt) / 1000;
    harness.push((used.harness / TICKS_PER_S / seconds) * 100);
    servers.push((used.servers / TICKS_PER_S / seconds) * 100);
    last = now;
    lastAt = at;
  }, everyMs);
  const share = (v: number[]): CpuShare => ({
    mean_pct: v.length ? Math.round(v.reduce((a, b) => a + b, 0) / v.length) : 0,
    peak_pct: Math.round(Math.max(0, ...v)),
    samples: v.length,
  });
  return {
    stop() {
      clearInterval(timer);
      return { ...share(harness), servers: share(servers) };
    },
  };
}
