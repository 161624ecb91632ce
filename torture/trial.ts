// One trial: start the run, watch every process it starts, kill it at the
// planned moment the planned way, start the next run, and once that one has
// started (its start sweeps what gone runs left) ask what is left of the
// trial: processes, containers, networks, directories outside the store. Then
// check the killed run's directory as a user would, let the next run finish,
// and remove whatever was found, so the torture itself leaves nothing.
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { sleep } from "../lib/index.ts";
import { logTableDisagreements } from "../resource/index.ts";
import type { ResourceDecision } from "../store/events.ts";
import type { Labelled } from "../docker/index.ts";
import { NOTHING, ownedBy, remove } from "./containers.ts";
import { kill, launch, launchNext, type Launched } from "./launch.ts";
import type { Moment, TrialPlan } from "./plan.ts";
import { ProcessTree, stillRunning, type SeenProcess } from "./processes.ts";
import { keptResourceTable } from "./resource-db.ts";
import { checkRun, operating, outsideDataDirs, runDirs, wroteNothing } from "./runs.ts";

/** How long a start-up may take before its kill lands at the latest (a docker run pulls nothing, but starts containers). */
const STARTUP_MS = { local: 3000, docker: 6000 };
/**
 * The teardown is short (a small run is healed, torn down, sorted and checked
 * within half a second of its time limit) and of unknown length, so half the
 * teardown kills land in the first HEAL_MS after the time limit (the heal, the
 * clients' grace; or at the first worker's exit if that comes first) and half
 * in the STOP_MS after the first worker has exited (the servers stopped, the
 * history sorted, the check: a small run is gone 50 to 100 ms later).
 */
const HEAL_MS = 300;
const STOP_MS = 40;
/** A worker process of a run (runner/worker.ts): the first to go when the operations are over. */
const WORKER = /\/runner\/worker\.[jt]s /;
/** A run that has not begun operating by then is killed anyway (and the line says so). */
const NO_OPERATIONS_MS = 180_000;
/** How long the trial's processes get to go once killed: a SIGINT'ed run or a soak's runs heal and tear down first. */
const SETTLE_MS = { quick: 15_000, graceful: 60_000 };
/** A next run that has not begun by then (or not ended after) is a finding of its own. */
const NEXT_RUN_MS = 150_000;

export interface Leftovers {
  processes: SeenProcess[];
  containers: Labelled["containers"];
  networks: Labelled["networks"];
  /** Directories a run made outside its store, still there. */
  dirs: string[];
}

export interface TrialResult {
  plan: TrialPlan;
  /** "operations +4.1s": the phase the kill landed in and the time since the run started; or why there was no kill. */
  when: string;
  /** How many processes of the trial's were seen. */
  watched: number;
  /** How many containers of the trial's were seen (docker). */
  containersSeen: number;
  left: Leftovers;
  /** Per run directory the trial left: the check's verdict, "nothing written", or "no verdict (...)". */
  checks: string[];
  /** Why the trial is DIRTY; none: CLEAN. */
  problems: string[];
  /** What is worth saying besides (what the kill hit). */
  notes: string[];
}

/** The trials' processes being watched now: killed if the torture itself is stopped. */
export const ACTIVE = new Set<ProcessTree>();

const oneLine = (p: SeenProcess): string => `${p.pid} ${p.args.length > 100 ? `${p.args.slice(0, 100)}...` : p.args}`;

/** Poll `f` every `stepMs` until it is true or `ms` pass; whether it became true. */
async function until(f: () => boolean, ms: number, stepMs = 50): Promise<boolean> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) return false;
    await sleep(stepMs);
  }
  return true;
}

const anyOperating = (store: string): boolean => runDirs(store).some(operating);

/** Wait for the planned moment; the phase the run is in then, or null if it ended first. */
async function awaitMoment(plan: TrialPlan, store: string, run: Launched, tree: ProcessTree, t0: number): Promise<{ phase: Moment; ms: number } | null> {
  let opsAt: number | null = null;
  let workerGoneAt: number | null = null;
  const limitMs = plan.timeLimit * 1000;
  for (;;) {
    if (run.exitedYet()) return null;
    const now = Date.now();
    if (opsAt === null && anyOperating(store)) opsAt = now;
    if (opsAt !== null && workerGoneAt === null && tree.all().some((p) => WORKER.test(p.args) && !stillRunning(p))) workerGoneAt = now;
    let target: number | null = null;
    if (plan.moment === "start-up") target = Math.min(t0 + plan.at * STARTUP_MS[plan.deploy], opsAt ?? Infinity);
    // The resource's store dies mid-writes: not in the first or last fifth of the operations.
    else if (plan.moment === "operations" && opsAt !== null) target = opsAt + (plan.way === "kill-resource-db" ? 0.2 + 0.6 * plan.at : plan.at) * limitMs;
    else if (plan.moment === "teardown" && opsAt !== null)
      target =
        plan.at < 0.5
          ? Math.min(opsAt + limitMs + 2 * plan.at * HEAL_MS, workerGoneAt ?? Infinity)
          : workerGoneAt === null
            ? null
            : workerGoneAt + 2 * (plan.at - 0.5) * STOP_MS;
    if ((target !== null && now >= target) || now - t0 > NO_OPERATIONS_MS) {
      const phase: Moment = opsAt === null ? "start-up" : now - opsAt < limitMs ? "operations" : "teardown";
      return { phase, ms: now - t0 };
    }
    // Once operating, finer: a small run's servers are stopped and its check done within 100 ms of its workers' exit.
    await sleep(opsAt === null ? 25 : 5);
  }
}

async function leftovers(plan: TrialPlan, tree: ProcessTree, dirs: () => string[]): Promise<Leftovers> {
  const owned = plan.deploy === "docker" ? await ownedBy(tree.ownerLabels()) : NOTHING;
  return { processes: tree.alive(), ...owned, dirs: dirs() };
}

/** Note every container the trial's processes own, every second until stopped. */
function watchContainers(tree: ProcessTree, seen: Set<string>): { stop(): void } {
  let stopped = false;
  void (async () => {
    while (!stopped) {
      for (const c of (await ownedBy(tree.ownerLabels()).catch(() => NOTHING)).containers) seen.add(c.id);
      await sleep(1000);
    }
  })();
  return { stop: () => void (stopped = true) };
}

const nothingLeft = (l: Leftovers): boolean => l.processes.length + l.containers.length + l.networks.length + l.dirs.length === 0;

/** Wait up to `ms` for nothing to be left; what is left then. */
async function settle(plan: TrialPlan, tree: ProcessTree, dirs: () => string[], ms: number): Promise<Leftovers> {
  const end = Date.now() + ms;
  for (;;) {
    const left = await leftovers(plan, tree, dirs);
    if (nothingLeft(left) || Date.now() > end) return left;
    await sleep(plan.deploy === "docker" ? 500 : 100);
  }
}

function describeLeft(who: string, l: Leftovers): string[] {
  return [
    ...l.processes.map((p) => `${who} left process ${oneLine(p)}`),
    ...l.containers.map((c) => `${who} left container ${c.name} (${c.state})`),
    ...l.networks.map((n) => `${who} left network ${n.name}`),
    ...l.dirs.map((d) => `${who} left directory ${d}`),
  ];
}

/** Kill and remove what was found (after it was reported). */
async function clear(tree: ProcessTree, l: Leftovers): Promise<void> {
  tree.killAlive();
  await remove(l);
  for (const d of l.dirs) rmSync(d, { recursive: true, force: true });
}

/** The resource's log and table after its store was killed (kill-resource-db): disagreements, or why they could not be compared. */
async function resourceAgreement(runDir: string, logFile: string): Promise<string[]> {
  try {
    const lines = readFileSync(join(runDir, "resource.ndjson"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as ResourceDecision);
    const table = await keptResourceTable(runDir, logFile);
    return logTableDisagreements(lines, table).map((d) => `resource.ndjson and the resource table disagree: ${d}`);
  } catch (err) {
    return [`the resource's log and table could not be compared: ${(err as Error).message.split("\n")[0]}`];
  }
}

export async function runTrial(plan: TrialPlan, dir: string): Promise<TrialResult> {
  const store = join(dir, "runs");
  const nextStore = join(dir, "next");
  mkdirSync(store, { recursive: true });
  const problems: string[] = [];
  const notes: string[] = [];
  const keptOnPurpose = plan.way === "kill-resource-db";
  const outside = (): string[] => (keptOnPurpose ? [] : runDirs(store).flatMap(outsideDataDirs));

  const t0 = Date.now();
  const run = launch(plan, store, dir);
  const tree = new ProcessTree(run.child.pid!);
  ACTIVE.add(tree);
  tree.watch();
  const containersSeen = new Set<string>();
  const containerWatch = plan.deploy === "docker" ? watchContainers(tree, containersSeen) : null;
  let when: string;
  let settleMs = SETTLE_MS.quick;
  try {
    const moment = await awaitMoment(plan, store, run, tree, t0);
    if (moment) {
      notes.push(kill(plan, run, tree));
      when = `${moment.phase} +${(moment.ms / 1000).toFixed(1)}s`;
    } else when = `no kill: it exited ${await run.exited} first`;
    if (plan.way === "ctrl-c" || plan.way === "kill-soak") settleMs = SETTLE_MS.graceful;
  } catch (err) {
    tree.killAlive();
    throw err;
  } finally {
    containerWatch?.stop();
  }

  // Interrupted, a run heals and tears down; with its resource's store killed, it goes on to its end.
  const waitMs = plan.way === "ctrl-c" ? 90_000 : plan.way === "kill-resource-db" ? plan.timeLimit * 1000 + 120_000 : 0;
  if (waitMs && !(await until(run.exitedYet, waitMs, 100))) problems.push(`the run was still running ${waitMs / 1000} s after the kill`);
  if (plan.way === "ctrl-c" && run.exitedYet()) notes.push(`npm exited ${await run.exited}`);

  // The next run; the trial's leftovers are counted once it has begun operating.
  const next = launchNext(plan, nextStore, dir);
  const nextTree = new ProcessTree(next.child.pid!);
  ACTIVE.add(nextTree);
  nextTree.watch();
  if (!(await until(() => anyOperating(nextStore) || next.exitedYet(), NEXT_RUN_MS, 100))) problems.push(`the next run did not begin within ${NEXT_RUN_MS / 1000} s`);
  const left = await settle(plan, tree, outside, settleMs);
  tree.stop();
  problems.push(...describeLeft("the trial", left));
  await clear(tree, left);
  ACTIVE.delete(tree);

  const checks: string[] = [];
  for (const runDir of runDirs(store)) {
    if (wroteNothing(runDir)) {
      checks.push("nothing written");
      continue;
    }
    const c = await checkRun(runDir);
    checks.push(c.verdict ?? `no verdict (exit ${c.code}: ${c.why})`);
    if (!c.verdict) problems.push(`fencecheck check ${runDir} gave no verdict: exit ${c.code}: ${c.why}`);
    if (keptOnPurpose && notes[0]?.startsWith("SIGKILL")) problems.push(...(await resourceAgreement(runDir, join(dir, "resource-db-reopened.log"))));
  }
  if (checks.length === 0) checks.push("nothing written");

  // The next run finishes on its own, leaving nothing either.
  const nextExit = (await until(next.exitedYet, NEXT_RUN_MS, 100)) ? await next.exited : null;
  if (nextExit !== "0") problems.push(nextExit === null ? `the next run did not end within ${NEXT_RUN_MS / 1000} s` : `the next run exited ${nextExit} (a clean run of Redis without faults exits 0)`);
  const nextLeft = await settle(plan, nextTree, () => [], nextExit === null ? 0 : SETTLE_MS.quick);
  nextTree.stop();
  problems.push(...describeLeft("the next run", nextLeft));
  await clear(nextTree, nextLeft);
  ACTIVE.delete(nextTree);

  // Server data (etcd preallocates 128 MB of WAL per member) is no evidence; a killed runner cannot remove it (docs/history-format.md).
  for (const runDir of [...runDirs(store), ...runDirs(nextStore)]) {
    if (keptOnPurpose) for (const d of outsideDataDirs(runDir)) rmSync(d, { recursive: true, force: true });
    rmSync(join(runDir, "data"), { recursive: true, force: true });
  }
  return { plan, when, watched: tree.all().length, containersSeen: containersSeen.size, left, checks, problems, notes };
}

/** The one line of a trial, then its findings indented. */
export function trialLines(r: TrialResult, of: number): string {
  const p = r.plan;
  const left = `watched ${r.watched} processes${p.deploy === "docker" ? ` and ${r.containersSeen} containers` : ""}, left ${r.left.processes.length} processes, ${r.left.containers.length} containers, ${r.left.networks.length} networks${r.left.dirs.length ? `, ${r.left.dirs.length} directories` : ""}`;
  const line = [
    `trial ${String(p.trial).padStart(String(of).length)}/${of}`,
    `${p.backend}/${p.deploy}`.padEnd(17),
    `nemesis ${p.nemesis}`.padEnd(20),
    p.way.padEnd(22),
    `at ${r.when}`.padEnd(22),
    left,
    `check ${r.checks.join(",")}`,
    r.problems.length ? "DIRTY" : "CLEAN",
  ].join("  ");
  return [line, ...r.notes.map((n) => `    ${n}`), ...r.problems.map((n) => `    ! ${n}`)].join("\n");
}
