// bench:suite-cpu's attribution of one /proc sample to the test files (apart from
// the bench, which runs the suite, so that a test can give it a table of its own).
import type { ProcStat } from "../lib/proc.ts";

/**
 * One sample's CPU, in ticks, by file: each process's ticks since `seen` (all of
 * them for one not seen before, which started since) go to the file its nearest
 * fork ancestor is running, or to "(between files)"; a process under no fork to
 * `elsewhere`. The forks' own ticks are left out: the probe's end marks give them.
 */
export function attribute(table: Map<number, ProcStat>, seen: Map<number, number>, forks: Set<number>, now: Map<number, string>): { files: Map<string, number>; elsewhere: number } {
  const files = new Map<string, number>();
  let elsewhere = 0;
  for (const [pid, p] of table) {
    const delta = p.ticks - (seen.get(pid) ?? 0);
    if (delta <= 0 || forks.has(pid)) continue;
    let file: string | undefined;
    for (let a: number | undefined = p.ppid, hops = 0; a !== undefined && hops < 64; a = table.get(a)?.ppid, hops++) {
      if (forks.has(a)) {
        file = now.get(a) ?? "(between files)";
        break;
      }
    }
    if (file === undefined) elsewhere += delta;
    else files.set(file, (files.get(file) ?? 0) + delta);
  }
  return { files, elsewhere };
}
