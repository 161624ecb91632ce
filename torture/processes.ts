// Every process a trial starts, found by walking /proc: the children of every
// process already seen, over and over while the trial runs. A process is known
// by its pid and its start time (lib/owner.ts's identity), so a pid the kernel
// hands to someone else after ours died is never taken for ours, and a process
// that was reparented to init when its parent died (what a killed runner's
// children become) is still ours: it was seen before.
import { readdirSync, readFileSync } from "node:fs";
import { ownerLabel, procStat } from "../lib/owner.ts";

export interface SeenProcess {
  pid: number;
  /** Clock ticks since boot at its start (/proc/<pid>/stat field 22). */
  start: string;
  /** Its command line as first seen, arguments joined by spaces. */
  args: string;
  /** Its parent when first seen. */
  ppid: number;
}

const identity = (pid: number, start: string): string => `${pid}/${start}`;

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0+$/, "").replace(/\0/g, " ");
  } catch {
    return "?";
  }
}

/** Every process now: pid -> [parent pid, start time]. */
function snapshot(): Map<number, [number, string]> {
  const all = new Map<number, [number, string]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = procStat(Number(name));
    if (stat) all.set(Number(name), [Number(stat[1]), stat[19]]);
  }
  return all;
}

/** Whether the process seen is still the one running under its pid. */
export function stillRunning(p: SeenProcess): boolean {
  const stat = procStat(p.pid);
  // A zombie has exited; only its parent's wait is missing.
  return stat !== null && stat[19] === p.start && stat[0] !== "Z";
}

export class ProcessTree {
  private readonly seen = new Map<string, SeenProcess>();
  private timer: NodeJS.Timeout | null = null;

  /** `root`: the process the trial spawned; everything below it is the trial's. */
  constructor(root: number) {
    this.add(root);
  }

  private add(pid: number, known?: [number, string]): SeenProcess | null {
    const stat = known ?? ((s) => (s ? ([Number(s[1]), s[19]] as [number, string]) : null))(procStat(pid));
    if (!stat) return null;
    const id = identity(pid, stat[1]);
    let p = this.seen.get(id);
    if (!p) this.seen.set(id, (p = { pid, start: stat[1], args: commandLine(pid), ppid: stat[0] }));
    return p;
  }

  /** One walk: every process whose parent is a process seen and still running is seen too. */
  scan(): void {
    const all = snapshot();
    const running = new Set<number>();
    for (const p of this.seen.values()) if (all.get(p.pid)?.[1] === p.start) running.add(p.pid);
    const children = new Map<number, number[]>();
    for (const [pid, [ppid]] of all) if (ppid > 0) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    const queue = [...running];
    while (queue.length) {
      for (const child of children.get(queue.pop()!) ?? []) {
        if (running.has(child)) continue;
        if (this.add(child, all.get(child))) {
          running.add(child);
          queue.push(child);
        }
      }
    }
  }

  /** Walk every `ms` until stop(). */
  watch(ms = 100): void {
    this.scan();
    this.timer ??= setInterval(() => this.scan(), ms);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  all(): SeenProcess[] {
    return [...this.seen.values()];
  }

  /** The processes seen that are still running. */
  alive(): SeenProcess[] {
    return this.all().filter(stillRunning);
  }

  /** The owner labels (lib/owner.ts) these processes put on containers and networks. */
  ownerLabels(): Set<string> {
    return new Set(this.all().map((p) => ownerLabel(p.pid, p.start)));
  }

  /** SIGKILL every process seen that still runs (SIGCONT first: a stopped one acts on nothing else); those it killed. */
  killAlive(): SeenProcess[] {
    const alive = this.alive();
    for (const p of alive)
      for (const sig of ["SIGCONT", "SIGKILL"] as const)
        try {
          if (stillRunning(p)) process.kill(p.pid, sig);
        } catch {
          // gone meanwhile
        }
    return alive;
  }
}
