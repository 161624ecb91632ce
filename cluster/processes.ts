// Every process a run starts (servers, the resource, workers) is started here, so
// one place knows them all: it can pause and resume them for the nemesis, and at
// teardown it resumes and kills each one and waits until it is gone. Each carries
// the run's marker in its environment (lib/owner.ts), which is how a later run
// finds it should the runner and its reaper be killed together (leftovers.ts).
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { openSync, closeSync, readFileSync, existsSync } from "node:fs";
import { Reaper } from "./reaper.ts";
import { dropDirOwner, markedEnv, noteDirOwner, ownerLabel } from "../lib/owner.ts";

export interface SpawnSpec {
  /** A name unique in the run: "redis-1", "resource", "worker-2". */
  name: string;
  command: string;
  args: string[];
  /** stdout and stderr go here. */
  logFile: string;
  env?: NodeJS.ProcessEnv;
  /** Open an IPC channel (Node children only). */
  ipc?: boolean;
  /** Keep stdout as a pipe for the caller (e.g. to read a "{port}" line). */
  pipeStdout?: boolean;
  /** Run as this user rather than ours (Postgres refuses to run as root). */
  user?: { uid: number; gid: number };
  /**
   * A pause, a resume and a kill take the children it has forked then too (a
   * postmaster's backends, which a signal to it does not reach: frozen alone, it
   * would go on answering through them).
   */
  withChildren?: boolean;
  /**
   * Signal its whole process group, which it leads: a worker and the adapter
   * programs it starts (a pause freezes the program running the lock library
   * with its client; a kill, or the reaper, leaves none behind).
   */
  group?: boolean;
}

export interface Supervised {
  name: string;
  pid: number;
  child: ChildProcess;
  logFile: string;
  /** Resolves with the exit code or signal once the process has exited. */
  exited: Promise<string>;
  withChildren: boolean;
  group: boolean;
  readonly alive: boolean;
}

export class ProcessGroup {
  private readonly reaper: Reaper;
  /** The directories removeAtTeardown named, in every later process's marker. */
  private readonly dirs: string[] = [];
  private readonly procs = new Map<string, Supervised>();
  private readonly paused = new Set<string>();
  /** The children frozen with a paused withChildren process, thawed with it (or at teardown). */
  private readonly frozenChildren = new Map<string, number[]>();

  /** `label` names the run (its directory) in the reaper's command line and in each process's marker. */
  constructor(private readonly label: string) {
    this.reaper = new Reaper(label);
  }

  private readonly stoppers: Array<() => Promise<void>> = [];
  private closed = false;

  /** Have the reaper kill a process started elsewhere if the runner dies first. */
  watch(pid: number): void {
    if (this.closed) process.kill(pid, "SIGKILL");
    else this.reaper.add(pid);
  }

  /**
   * A directory the run made outside its run directory, removed at teardown after
   * the processes, or by the reaper if the runner dies first; unless keepDirs().
   */
  removeAtTeardown(dir: string): void {
    this.reaper.removeDir(dir);
    this.dirs.push(dir);
    noteDirOwner(dir);
  }

  /** Keep the directories removeAtTeardown named (--keep-data). */
  keepDirs(): void {
    this.reaper.keepDirs();
    for (const d of this.dirs) dropDirOwner(d);
    this.dirs.length = 0;
  }

  /** Stop something started elsewhere (a service with its own stop) at teardown. */
  onStop(stop: () => Promise<void>): void {
    if (this.closed) void stop().catch(() => {});
    else this.stoppers.push(stop);
  }

  async spawn(spec: SpawnSpec): Promise<Supervised> {
    if (this.procs.has(spec.name)) throw new Error(`a process named ${spec.name} is already running`);
    const log = openSync(spec.logFile, "a");
    const stdio: StdioOptions = ["ignore", spec.pipeStdout ? "pipe" : log, log];
    if (spec.ipc) stdio.push("ipc");
    // detached: a process group of its own, so a Ctrl-C meant for the runner does not
    // reach the servers first; the runner then tears down in order and records it.
    const env = markedEnv(spec.env ?? process.env, { owner: ownerLabel(), run: this.label, dirs: this.dirs });
    const child = spawn(spec.command, spec.args, { stdio, env, detached: true, ...spec.user });
    closeSync(log);
    const pid = await new Promise<number>((resolve, reject) => {
      child.once("spawn", () => resolve(child.pid!));
      child.once("error", (err: NodeJS.ErrnoException) =>
        reject(new Error(err.code === "ENOENT" ? `cannot start ${spec.name}: ${spec.command} not found (is it installed?)` : `cannot start ${spec.name}: ${err.message}`)),
      );
    });
    if (this.closed) {
      // Torn down while this one was starting (Ctrl-C during start-up): it must
      // not outlive the teardown that already ran.
      process.kill(pid, "SIGKILL");
      throw new Error(`${spec.name} started after the run was stopped`);
    }
    const group = spec.group ?? false;
    this.reaper.add(pid, group);
    let alive = true;
    const exited = new Promise<string>((resolve) => {
      child.once("exit", (code, signal) => {
        alive = false;
        // A group's other members may outlive its leader: kill them (a worker that died leaves its adapter programs).
        if (group) signalGroup(pid, "SIGKILL");
        this.reaper.remove(pid, group);
        resolve(signal ?? String(code));
      });
    });
    const proc: Supervised = { name: spec.name, pid, child, logFile: spec.logFile, exited, withChildren: spec.withChildren ?? false, group, get alive() { return alive; } };
    this.procs.set(spec.name, proc);
    return proc;
  }

  get(name: string): Supervised | undefined {
    return this.procs.get(name);
  }

  running(name: string): boolean {
    return this.procs.get(name)?.alive ?? false;
  }

  /** Forget a process `watch` was told of (it has gone by other means). */
  unwatch(pid: number): void {
    this.reaper.remove(pid);
  }

  names(prefix = ""): string[] {
    return [...this.procs.keys()].filter((n) => n.startsWith(prefix) && this.procs.get(n)!.alive);
  }

  pause(name: string): boolean {
    if (!this.signal(name, "SIGSTOP", () => this.paused.add(name))) return false;
    const p = this.procs.get(name)!;
    if (p.withChildren) {
      // The parent first, so it forks no child the list misses. Each is the
      // reaper's too: frozen, it must not outlive a runner that dies.
      const children = childrenOf(p.pid);
      for (const c of children) this.reaper.add(c);
      signalAll(children, "SIGSTOP");
      this.frozenChildren.set(name, [...(this.frozenChildren.get(name) ?? []), ...children]);
    }
    return true;
  }

  resume(name: string): boolean {
    this.thawChildren(name);
    return this.signal(name, "SIGCONT", () => this.paused.delete(name));
  }

  private thawChildren(name: string): void {
    const children = this.frozenChildren.get(name) ?? [];
    this.frozenChildren.delete(name);
    signalAll(children, "SIGCONT");
    for (const c of children) this.reaper.remove(c);
  }

  isPaused(name: string): boolean {
    return this.paused.has(name);
  }

  /** SIGKILL one process and wait for it to be gone. */
  async kill(name: string): Promise<void> {
    const p = this.procs.get(name);
    if (!p) return;
    if (p.alive) {
      // Read before the parent dies: its orphans are the kernel's to list no more.
      const children = p.withChildren ? childrenOf(p.pid) : [];
      this.thawChildren(name);
      this.signal(name, "SIGCONT", () => this.paused.delete(name));
      this.signal(name, "SIGKILL", () => {});
      signalAll(children, "SIGCONT");
      signalAll(children, "SIGKILL");
      await p.exited;
    }
    this.procs.delete(name);
  }

  /** Resume every paused process (the nemesis' final heal relies on this too). */
  resumeAll(): void {
    for (const name of [...this.paused]) this.resume(name);
  }

  /** Teardown: resume and kill everything, wait until each has exited. */
  async stopAll(): Promise<void> {
    this.closed = true;
    this.resumeAll();
    await Promise.all([...this.procs.keys()].map((n) => this.kill(n)));
    await Promise.all(this.stoppers.splice(0).map((stop) => stop().catch(() => {})));
    await this.reaper.close();
  }

  private signal(name: string, sig: NodeJS.Signals, after: () => void): boolean {
    const p = this.procs.get(name);
    if (!p || !p.alive) return false;
    try {
      process.kill(p.group ? -p.pid : p.pid, sig);
      after();
      return true;
    } catch {
      return false;
    }
  }
}

/** Signal every process of the group `pgid` leads, if any is left. */
function signalGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    // None left.
  }
}

/**
 * Wait until `ready` says yes for every named member, polling every `stepMs`; fail
 * naming a member that died (with its log's tail) or the laggards once `timeoutMs` passed.
 */
export async function waitForMembers(
  names: string[],
  what: string,
  ready: (name: string) => Promise<boolean>,
  o: { running: (name: string) => boolean; logFile: (name: string) => string; timeoutMs: number; stepMs: number },
): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  let pending = names;
  for (;;) {
    const dead = pending.filter((n) => !o.running(n));
    if (dead.length) throw new Error(`${dead[0]} exited at start:\n${logTail(o.logFile(dead[0]))}`);
    const answers = await Promise.all(pending.map(ready));
    pending = pending.filter((_, i) => !answers[i]);
    if (pending.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${pending.join(", ")} not ${what} within ${o.timeoutMs / 1000} s:\n${logTail(o.logFile(pending[0]))}`);
    await new Promise((r) => setTimeout(r, o.stepMs));
  }
}

/** The last lines of a log, to explain a process that died at start. */
export function logTail(file: string, lines = 15): string {
  if (!existsSync(file)) return "";
  return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

/** The processes `pid` has forked and that still run, now. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Signal each of `pids` that is still there. */
export function signalAll(pids: readonly number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // Gone already.
    }
  }
}
