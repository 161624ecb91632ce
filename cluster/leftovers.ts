// The local processes of runs that are gone. A run's reaper kills its servers,
// proxies and workers when the runner dies; a runner killed together with its
// reaper (`kill -9 -- -PGID` of a CI step, the OOM killer) leaves them running,
// a paused one stopped, for ever. Every one of them carries its runner's owner
// label in its environment (lib/owner.ts), so the next run that starts, or
// `fencecheck reap`, finds them in /proc and kills those whose owner is gone:
// docker/leftovers.ts does the same for containers by their labels. A process of
// a runner still going (another run, a soak's jobs) is never touched, nor one
// whose owner is on another host (another container's runs), nor one whose
// environment we may not read (another user's, unless we are root: it cannot
// have been started by us).
import { lstatSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, isAbsolute, join } from "node:path";
import { sleep } from "../lib/time.ts";
import { dirOwner, markerOf, ownerAlive, procStat, runs, type Marker } from "../lib/owner.ts";
import { childrenOf } from "./processes.ts";

export interface SweptProcess {
  pid: number;
  /** Its command line, cut to COMMAND_CHARS. */
  command: string;
  owner: string;
  /** Its run's directory, where its marker names it. */
  run?: string;
}

export interface Swept {
  processes: SweptProcess[];
  /** Directories such runs made outside their run directories (a Postgres data directory), removed. */
  dirs: string[];
}

const COMMAND_CHARS = 200;
/** How long a killed process may take to be gone before the sweep goes on without waiting for it. */
const GONE_WITHIN_MS = 3000;

interface Marked extends Marker {
  pid: number;
  /** Its start time (/proc/<pid>/stat), so a pid reused since the scan is not signalled. */
  start: string;
  /** Whether it leads a process group (every detached spawn does): the group goes with it. */
  leader: boolean;
}

/** This process and its ancestors: never swept, whatever their environment says. */
function ourselves(): Set<number> {
  const spared = new Set<number>();
  for (let pid = process.pid; pid > 1 && !spared.has(pid); pid = Number(procStat(pid)?.[1] ?? 0)) spared.add(pid);
  return spared;
}

/** Every process whose environment carries a run's marker, but those `spared`. */
function markedProcesses(spared: Set<number>): Marked[] {
  const found: Marked[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return []; // No /proc: not Linux, no local leftovers to know of.
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (spared.has(pid)) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, "utf8");
    } catch {
      continue; // Gone, or another user's (EACCES): not ours to judge.
    }
    const env: NodeJS.ProcessEnv = {};
    for (const pair of environ.split("\0")) {
      const eq = pair.indexOf("=");
      if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    const marker = markerOf(env);
    const stat = procStat(pid);
    if (!marker || !stat || stat[0] === "Z") continue;
    found.push({ ...marker, pid, start: stat[19], leader: Number(stat[2]) === pid });
  }
  return found;
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0+$/, "").replace(/\0/g, " ").slice(0, COMMAND_CHARS);
  } catch {
    return "";
  }
}

/** Whether `p` is still the process the scan found. */
const stillThere = (p: Marked): boolean => runs(p.pid, p.start);

function signal(target: number, sig: NodeJS.Signals): void {
  try {
    process.kill(target, sig);
  } catch {
    // Gone already.
  }
}

/**
 * A directory a swept run named for removal, if it still looks like one a run
 * made: absolute, `fencecheck-...` (mkdtemp's), a real directory (no link to
 * follow) and ours (the runner made it as the user it ran as). An environment is
 * anyone's to write, so nothing else is removed on its word.
 */
function removable(dir: string): boolean {
  if (!isAbsolute(dir) || !basename(dir).startsWith("fencecheck-")) return false;
  try {
    const s = lstatSync(dir);
    return s.isDirectory() && s.uid === process.getuid?.();
  } catch {
    return false;
  }
}

/** The directories of the temporary directory whose note names an owner that is gone. */
function ownedDirs(ownerGone: (owner: string) => boolean): string[] {
  const root = tmpdir();
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => n.startsWith("fencecheck-"));
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    try {
      const owner = dirOwner(join(root, n));
      return owner && ownerGone(owner) ? [join(root, n)] : [];
    } catch {
      return [];
    }
  });
}

/** Every process `pid` has forked that still runs, and theirs, with their start times. */
function descendants(pid: number): Array<{ pid: number; start: string }> {
  const found: Array<{ pid: number; start: string }> = [];
  for (let next = childrenOf(pid); next.length; ) {
    const level = next.flatMap((c) => {
      const start = procStat(c)?.[19];
      return start === undefined ? [] : [{ pid: c, start }];
    });
    found.push(...level);
    next = level.flatMap((c) => childrenOf(c.pid));
  }
  return found;
}

/**
 * Kill every process marked with an owner that is gone (SIGCONT, then SIGKILL;
 * its whole process group where it leads one), and whatever it has forked,
 * marked or not: a Postgres backend writes its process title over its
 * environment, and with it the mark, and one frozen with its postmaster would
 * never see it die. Wait until they are gone, then remove the directories they
 * name that no live run names too.
 */
export async function sweepLeftovers(): Promise<Swept> {
  const alive = new Map<string, boolean>();
  const ownerGone = (owner: string): boolean => {
    if (!alive.has(owner)) alive.set(owner, ownerAlive(owner));
    return !alive.get(owner);
  };
  const spared = ourselves();
  const marked = markedProcesses(spared);
  const dead = marked.filter((p) => ownerGone(p.owner));
  // All of them found before any is signalled: a killed parent's children are no longer its own to list.
  const targets = new Map<number, Marked>();
  for (const p of dead) {
    targets.set(p.pid, p);
    for (const c of descendants(p.pid)) if (!targets.has(c.pid) && !spared.has(c.pid)) targets.set(c.pid, { ...c, owner: p.owner, run: p.run, leader: false });
  }
  const swept: SweptProcess[] = [];
  const signalled: Marked[] = [];
  for (const p of targets.values()) {
    // Read last thing before the signal: a pid reused since the scan is someone else's.
    if (!stillThere(p)) continue;
    const command = commandOf(p.pid);
    const target = p.leader ? -p.pid : p.pid;
    signal(target, "SIGCONT");
    signal(target, "SIGKILL");
    signalled.push(p);
    swept.push({ pid: p.pid, command, owner: p.owner, ...(p.run ? { run: p.run } : {}) });
  }
  // Its ports free and its files closed before anything takes them again.
  const deadline = Date.now() + GONE_WITHIN_MS;
  while (signalled.some(stillThere) && Date.now() < deadline) await sleep(20);

  const inUse = new Set(marked.filter((p) => !ownerGone(p.owner)).flatMap((p) => p.dirs ?? []));
  const named = [...dead.flatMap((p) => p.dirs ?? []), ...ownedDirs(ownerGone)];
  const dirs = [...new Set(named)].filter((d) => !inUse.has(d) && removable(d));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  return { processes: swept, dirs };
}

/** The one line a sweep that found something prints (null: it found nothing). */
export function describeSwept(swept: Swept): string | null {
  const parts: string[] = [];
  const n = swept.processes.length;
  if (n) parts.push(`killed ${n} process${n === 1 ? "" : "es"} (pid ${swept.processes.map((p) => p.pid).join(", ")})`);
  const d = swept.dirs.length;
  if (d) parts.push(`removed ${d} director${d === 1 ? "y" : "ies"} (${swept.dirs.join(", ")})`);
  return parts.length ? `${parts.join(" and ")} left by runs that are gone` : null;
}
