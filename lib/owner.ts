// Who made something that outlives its process (a container, a network, a
// port's reservation): this machine, a pid and that process's start time, so
// that a pid the kernel gave to another process since is no owner. Whatever an
// owner that is gone left is anyone's to remove.
import { hostname } from "node:os";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

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

/**
 * Whether the owner a label names is alive; an owner on another machine is taken
 * to be. A zombie is not: it runs no more code and holds no socket, and a parent
 * that never reaps it would otherwise keep its leftovers for ever.
 */
export function ownerAlive(label: string): boolean {
  const [host, pid, start] = label.split("/");
  return host !== hostname() || runs(Number(pid), start);
}

/** Whether the process `pid` that started at `start` still runs: not exited, no zombie, its pid not given to another since. */
export function runs(pid: number, start: string): boolean {
  const stat = procStat(pid);
  return stat !== null && stat[0] !== "Z" && stat[19] === start;
}

// Every process a run starts carries its runner's owner label in its environment
// (and so do their children, which inherit it: a postmaster's backends, a JVM's,
// an adapter program of a worker's). The reaper kills them when the runner dies;
// when the reaper dies with it (`kill -9 -- -PGID`, the OOM killer), the label is
// how the next run, or `fencecheck reap`, finds what is left (cluster/leftovers.ts).
// Never a process's name: a redis-server of the user's is no leftover of ours.
export const OWNER_ENV = "FENCECHECK_OWNER";
/** The run directory, where the spawner knows it (a ProcessGroup's label). */
export const RUN_ENV = "FENCECHECK_RUN";
/** Directories the run made outside its run directory, one a line, that its reaper would remove. */
export const DIRS_ENV = "FENCECHECK_REMOVE_DIRS";

/** What a run's process is marked with. */
export interface Marker {
  owner: string;
  run?: string;
  dirs?: readonly string[];
}

/**
 * `env` with the marker of a run's process: by default, this process as its
 * owner. Whatever marker `env` carried is replaced, never merged.
 */
export function markedEnv(env: NodeJS.ProcessEnv = process.env, marker: Marker = { owner: ownerLabel() }): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env, [OWNER_ENV]: marker.owner };
  delete out[RUN_ENV];
  delete out[DIRS_ENV];
  if (marker.run !== undefined) out[RUN_ENV] = marker.run;
  if (marker.dirs?.length) out[DIRS_ENV] = marker.dirs.join("\n");
  return out;
}

/** The marker an environment carries (a process's, read from /proc/<pid>/environ, or ours), or null. */
export function markerOf(env: NodeJS.ProcessEnv): Marker | null {
  const owner = env[OWNER_ENV];
  if (!owner) return null;
  const dirs = env[DIRS_ENV]?.split("\n").filter(Boolean);
  return { owner, ...(env[RUN_ENV] ? { run: env[RUN_ENV] } : {}), ...(dirs?.length ? { dirs } : {}) };
}

/** The file in a directory made outside a run directory that names the runner that made it. */
const OWNER_NOTE = ".fencecheck-owner";

/**
 * Note in `dir` (made outside its run directory, for the reaper to remove) the
 * runner that made it. Its processes name it in their environment too, but a
 * runner killed in its teardown, after its servers are gone, leaves it with no
 * process to name it: the note does (cluster/leftovers.ts).
 */
export function noteDirOwner(dir: string): void {
  writeFileSync(join(dir, OWNER_NOTE), ownerLabel());
}

/** The directory is kept (--keep-data): no sweep may take it once its runner is gone. */
export function dropDirOwner(dir: string): void {
  rmSync(join(dir, OWNER_NOTE), { force: true });
}

/** The owner a directory's note names, or null. */
export function dirOwner(dir: string): string | null {
  try {
    return readFileSync(join(dir, OWNER_NOTE), "utf8").trim() || null;
  } catch {
    return null;
  }
}
