// One run of a test, start to verdict: options -> test -> cluster + resource +
// workers + nemesis -> history on disk -> checker -> results -> report.
//
// Whatever happens (an error at start, a crash mid-run, Ctrl-C), the `finally`
// heals every fault, stops every process the run started, and closes the history
// with what was recorded. The reaper behind the process group covers the one case
// a `finally` cannot: the runner itself being killed. And what a runner killed
// together with its reaper left, the next run sweeps as it starts (cluster/leftovers.ts).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ProcessGroup } from "../cluster/processes.ts";
import { WELL_KNOWN_PORTS } from "../backends/index.ts";
import { PortPlan } from "../cluster/ports.ts";
import { describeSwept, sweepLeftovers } from "../cluster/leftovers.ts";
import { HistoryWriter, ProcessMapRecorder, createRunDir, writeJson, newRunStart, runClock, FORMAT, FORMAT_2, RUN_FILES, type HistoryHeader, type UnindexedEvent } from "../store/index.ts";
import { NEMESES, nemesisNamed, NemesisSchedule, ScriptSchedule, type NemesisContext, type Schedule } from "../nemesis/index.ts";
import { rng, sleep } from "../lib/index.ts";
import { startParts, workerOfClient, type RunParts } from "./start-parts.ts";
import { StatusLine } from "./status.ts";
import { HoldTracker } from "./holders.ts";
import { askServerVersions, describeRun } from "./run-info.ts";
import { isManifestPath } from "../clients/index.ts";
import { serveMetrics, type MetricsServer } from "./metrics.ts";
import type { Test } from "../core/test-definition.ts";

/**
 * How far ahead of "go" time zero lies. The workers are idle when it is sent (each
 * has said it is ready), so the message takes well under a millisecond to be
 * handled, and tens on a machine busy enough to leave a process waiting for a
 * core; a worker that gets it late anyway says so (runner/worker.ts). It was 250
 * ms, a quarter of a second every run waited for nothing.
 */
const START_LEAD_MS = 100;
/** Adapter failures printed on the console before the rest are left to the workers' logs. */
const SHOWN_WARNINGS = 3;
/** Where the servers keep their files inside the run directory (cluster/). */
const SERVER_DATA = "data";

export interface RunOutcome {
  runDir: string;
  /** Set when the run was interrupted (Ctrl-C, SIGTERM) before its time limit. */
  interrupted: string | null;
}

/**
 * The history's header. Format 2 where the run uses some of it: notices (an
 * adapter program's, or a library's that tells them), a lock kind other than
 * the mutex, withdrawn waits, a resource deciding in a database (committed
 * decisions); format 1 otherwise, so that such runs read as they always did.
 */
function headerOf(test: Test, id: string): HistoryHeader {
  const lock = test.workloadOptions.lock;
  // A database's resource logs committed decisions, with their `order`.
  const format2 = tellsNotices(test) || lock.kind !== "mutex" || test.workloadOptions.cancelRate > 0 || test.resourceStore !== undefined;
  const header: HistoryHeader = { format: format2 ? FORMAT_2 : FORMAT, kind: "header", run: id, workload: test.workload.name, backend: test.backend.name, fencing: test.fencing };
  if (!format2) return header;
  const reentry = lock.kind === "reentrant" ? test.clientKinds?.reentrant?.fenceOnReentry : undefined;
  return { ...header, lock: lock.kind, ...(lock.kind === "semaphore" ? { permits: lock.permits } : {}), ...(reentry ? { fence_on_reentry: reentry } : {}), client: test.client };
}

/**
 * When each step of a run ended, for run.json's `timings`: ms on the run's clock
 * (the history's), so a phase reads against the events; and how long the process
 * ran before the run's clock started (node's start, loading, setup, preflight).
 * bench/run-cost.ts reads them to say where a run's time beyond --time-limit goes.
 */
function phaseClock(clock: () => number): { timings: { t0: string; before_run_ms: number; phases_ms: Record<string, number> }; mark(phase: string, at?: number): void } {
  const ms = (x: number): number => Math.round(x * 10) / 10;
  const before = performance.now();
  const timings = { t0: new Date(performance.timeOrigin + before).toISOString(), before_run_ms: ms(before), phases_ms: {} as Record<string, number> };
  return {
    timings,
    // The first time counts: a step reported again (the deployment's, as containers come up) ended when it first did.
    mark: (phase, at = clock()) => void (timings.phases_ms[phase] ??= ms(at / 1e6)),
  };
}

/**
 * `operating` is called once the operations have begun: what the caller needs
 * after the run (the checker's code) is best loaded then, when this process is
 * idle, rather than before the run, when every ms of its start counts.
 */
export async function runTest(test: Test, log: (line: string) => void = (l) => process.stderr.write(l + "\n"), operating: () => void = () => {}): Promise<RunOutcome> {
  // Before anything is started or a port drawn: a dead run's server may still
  // listen on a port whose reservation the draw would take as free.
  const swept = await sweepLeftovers();
  const t0 = newRunStart();
  const clock = runClock(t0);
  const phases = phaseClock(clock);
  const { dir: runDir, id } = createRunDir(test.store, test.name);
  const group = new ProcessGroup(runDir);
  const ports = new PortPlan(test.portBase, WELL_KNOWN_PORTS);
  const header = headerOf(test, id);
  const history = new HistoryWriter(join(runDir, RUN_FILES.history), header);
  const status = new StatusLine(() => clock() / 1e9, test.timeLimitS, () => schedule?.active() ?? []);
  // A retired process carries on as process + concurrency, so p mod concurrency is its client.
  const clientOf = (p: number): number => p % test.concurrency;
  const holds = new HoldTracker((p) => workerOfClient(clientOf(p), test.workers));
  // run.json's `processes`: which worker each process's events came from, so that
  // a check can say which of them a fault on a worker froze, cut off or slowed.
  const places = new ProcessMapRecorder(clientOf);
  const record = (events: UnindexedEvent[], worker?: string): void => {
    history.append(events);
    status.count(events);
    holds.observe(events);
    if (worker !== undefined) places.observe(worker, events);
  };
  let schedule: Schedule | null = null;
  let warnings = 0;
  let interrupted: string | null = null;
  const interruption = new Promise<void>((resolve) => {
    const onSignal = (sig: NodeJS.Signals): void => {
      // A terminal sends Ctrl-C to the whole foreground group (npm, tsx, us): the
      // first one counts, the echoes are ignored.
      if (interrupted) return;
      interrupted = sig;
      log(`\n${sig}: stopping the run, healing faults and keeping the history recorded so far`);
      resolve();
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    process.on("SIGHUP", onSignal);
  });
  const info = describeRun(test, runDir);
  if (swept.processes.length) info.swept_processes = swept.processes;
  if (swept.dirs.length) info.swept_dirs = swept.dirs;
  info.timings = phases.timings;
  writeJson(join(runDir, RUN_FILES.run), info);
  const sweptLine = describeSwept(swept);
  if (sweptLine) log(`fencecheck: ${sweptLine}`);
  // Asked while the system starts; each later write of run.json carries what has come, and the last waits for all.
  const versions = askServerVersions(info);
  log(`fencecheck: ${test.name}, client ${test.client}, seed ${test.seed}, run directory ${runDir}`);

  let system: RunParts | null = null;
  let metrics: MetricsServer | null = null;
  let failure: { err: unknown } | null = null;
  try {
    if (test.metricsPort != null) {
      // Up before the system, so the address is known (and printed) at start;
      // the workers', proxy's and resource's metrics show on it once all are up.
      metrics = await serveMetrics(test.metricsPort, {
        workers: () => system?.workers.map((w) => w.metrics) ?? [],
        services: () => system?.metricsServices ?? [],
      });
      log(`fencecheck: metrics at ${metrics.url}`);
      info.metrics = metrics.url;
      writeJson(join(runDir, RUN_FILES.run), info);
    }
    const starting = startParts({
      test,
      group,
      ports,
      runDir,
      t0,
      record,
      warn: (worker, message) => {
        // The first few in full; the rest are counted, and all are in the workers' logs.
        if (++warnings <= SHOWN_WARNINGS) log(`fencecheck: ${worker}: ${message}`);
        else if (warnings === SHOWN_WARNINGS + 1) log(`fencecheck: more adapter failures follow; each is in logs/worker-N.log`);
      },
      started: (what, about) => {
        phases.mark(what);
        info[what] = about;
        writeJson(join(runDir, RUN_FILES.run), info);
      },
    });
    system = await Promise.race([starting, interruption.then(() => null)]);
    if (interrupted || !system) {
      // Let the start-up finish failing or succeeding before the teardown below.
      await starting.then((s) => s.close(), () => {});
      return { runDir, interrupted };
    }
    const { workers, nodes } = system;

    const ctx: NemesisContext = {
      rng: rng(test.seed, "nemesis"),
      processes: group,
      workers: workers.map((w) => w.name),
      holds: () => holds.holds(),
      servers: nodes.map((n) => n.name),
      links: system.links,
      cluster: system.cluster,
      ...(system.skewWorkerClock ? { skewWorkerClock: system.skewWorkerClock } : {}),
      options: test.nemesisOptions,
      record: (f, value) => record([{ time: clock(), process: "nemesis", type: "info", f, value }]),
    };
    // A script (a scenario's chosen faults) replaces the random schedule.
    schedule = test.script ? new ScriptSchedule(test.script, NEMESES, ctx, clock) : new NemesisSchedule(test.nemeses.map((n) => nemesisNamed(n)!.create()), ctx, clock);
    await schedule.prepare();

    // Time zero lies a little ahead, so that every worker has its "go" before it:
    // a worker scheduled late must not lose the place its clients' staggered
    // starts give them (the scenarios rely on client 0 going first).
    const startAt = clock() + START_LEAD_MS * 1e6;
    const endAt = startAt + test.timeLimitS * 1e9;
    for (const w of workers) w.send({ type: "go", startAt, endAt });
    schedule.start(startAt, endAt);
    status.start();
    phases.mark("go", startAt);
    operating();
    await Promise.race([sleep((endAt - clock()) / 1e6), interruption]);
    phases.mark("end");

    // Jepsen's final generator: heal everything, then let the clients finish.
    await schedule.healAll();
    phases.mark("healed");
    for (const w of workers) w.send({ type: "stop" });
    const allDone = Promise.all(workers.map((w) => w.done));
    const graceMs = interrupted ? Math.min(1000, test.graceMs) : test.graceMs;
    await Promise.race([allDone, sleep(graceMs), interruption.then(() => sleep(1000))]);
    phases.mark("clients_done");
    info.event_loop_delay_ms = Object.fromEntries(workers.filter((w) => w.eventLoopDelayMs).map((w) => [w.name, w.eventLoopDelayMs]));
    return { runDir, interrupted };
  } catch (err) {
    failure = { err };
  } finally {
    status.stop();
    // First, so the port is free once the run is over whatever happens below.
    await metrics?.close();
    await schedule?.healAll().catch(() => {});
    // --otel: every span in the file before anything it traced is torn down further.
    if (system?.otel) {
      await system.otel.finish().catch((err: Error) => log(`fencecheck: stopping the collector: ${err.message}`));
      phases.mark("spans_flushed");
    }
    await system?.close().catch(() => {});
    // Data kept outside the run directory (a Postgres the postgres user can reach) stays too.
    if (test.keepData) group.keepDirs();
    await group.stopAll();
    // Its servers are gone: their ports are anyone's again.
    ports.release();
    // The servers' files serve no check and no report, and etcd's alone are 384 MB
    // a run (preallocated WALs), which a nightly soak of many runs cannot afford.
    if (!test.keepData) rmSync(join(runDir, SERVER_DATA), { recursive: true, force: true });
    history.finish();
    phases.mark("torn_down");
    info.finished = new Date().toISOString();
    info.events = history.count;
    info.processes = places.toJSON();
    await versions;
    writeJson(join(runDir, RUN_FILES.run), info);
  }
  // A start cut short by Ctrl-C fails in whatever step it was in; that is the
  // interruption, not a failure of the tool. The judgement waits for the teardown
  // above: a Ctrl-C that reached a child still in our process group (between its
  // fork and its setsid) can kill it, and that death be reported, before our own
  // SIGINT handler has run.
  if (failure && !interrupted) throw failure.err;
  return { runDir, interrupted };
}

/** Whether a run's history may hold notices: its client runs as an adapter program (its manifest named, or a shipped one), or its library tells them. */
const tellsNotices = (test: Test): boolean => isManifestPath(test.client) || test.clientKind?.program !== undefined || test.clientKind?.notices === true;
