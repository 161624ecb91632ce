// Who made something that outlives its process (a container, a network, a
// port's reservation): this machine, a pid and that process's start time, so
// that a pid the kernel gave to another process since is no owner. Whatever an
// owner that is gone left is anyone's to remove.
import { hostname } from "node:os";
import { readFileSync } from "node:fs";

/**
 * The fields of /proc/<pid>/stat after the command name (Linux): [0] its
 * state, [1] its parent's pid, [19] its start time; null when there is no
 * such process (or no /proc).
 */
export function procStat(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses; the fields after its last ")" do not.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** The kernel's start time of a process (clock ticks since boot), or null when it does not exist. */
const startTime = (pid: number): string | null => procStat(pid)?.[19] ?? null;

/** A process as an owner label: "host/pid/start" (`start` given: a process that may be gone by now). */
export function ownerLabel(pid = process.pid, start = startTime(pid)): string {
  return `${hostname()}/${pid}/${start ?? "?"}`;
}

/** Whether the owner a label names is alive; an owner on another machine is taken to be. */
export function ownerAlive(label: string): boolean {
  const [host, pid, start] = label.split("/");
  if (host !== hostname()) return true;
  const now = startTime(Number(pid));
  return now !== null && now === start;
}
