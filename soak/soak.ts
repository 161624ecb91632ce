// A soak from start to summary: plan every run (configuration x test count, each
// with its derived seed; with --shard, this machine's share of them: plan.ts),
// run them as test:jepsen children, up to --jobs at once, print a line as each
// finishes, and write the summary of what finished, however the soak ends (its
// last run, the time budget, Ctrl-C). Runs start round-robin, run 0 of every
// configuration before run 1 of any, so a time budget that cuts the soak short
// leaves every configuration with runs rather than a few configurations with all.
// Jobs take the next planned run as they come free, so the order of starts is the
// plan's whatever the jobs; only the order of finishes (and of the lines) varies.
import { join } from "node:path";
import type { Configuration, Matrix } from "./matrix.ts";
import { planRuns, shardText, type Shard } from "./plan.ts";
import { appendRecord, createSoakDir, linkLatest, SOAK_FILES, writePlan, type PlannedRun, type RunRecord, type SoakPlan } from "./records.ts";
import { startRun, type RunningRun } from "./run-one.ts";
import { finishSoak } from "./finish.ts";
import { duration } from "./table.ts";
import type { SoakSummary } from "./summary.ts";

export interface SoakOptions {
  matrix: Matrix;
  /** The configurations to run (--only), in the matrix's order. */
  configurations: Configuration[];
  only: string[] | null;
  testCount: number;
  timeLimitS: number | null;
  /** --deploy: where every configuration's servers run (null: each configuration's own). */
  deploy: "local" | "docker" | null;
  timeBudgetS: number | null;
  seed: number;
  store: string;
  /** A soak directory (or its summary.json) to compare with, instead of the previous soak of the matrix. */
  compare: string | null;
  keepRuns: number | null;
  /** --metrics-port: where each run in turn serves its metrics, job j's on this port + j (null: none). */
  metricsPort: number | null;
  /** --jobs: how many runs go at once. */
  jobs: number;
  /** --shard: run only this share of the plan (null: all of it). */
  shard: Shard | null;
  /** Progress lines (stderr). */
  log: (line: string) => void;
}

/** test:jepsen's default --time-limit, for the estimate of a run that sets none. */
const DEFAULT_TIME_LIMIT_S = 30;
/** Start-up, grace, teardown and check on top of the time limit, until a run has been measured. */
const DEFAULT_OVERHEAD_S = 20;

export async function runSoak(o: SoakOptions): Promise<{ soakDir: string; summary: SoakSummary }> {
  const started = Date.now();
  const soakDir = createSoakDir(o.store);
  const planned = planRuns(o, soakDir);
  const plan: SoakPlan = {
    format: 1,
    kind: "soak",
    matrix: { name: o.matrix.name, source: o.matrix.source, hash: o.matrix.hash, configurations: o.configurations },
    options: { test_count: o.testCount, time_limit_s: o.timeLimitS, deploy: o.deploy, time_budget_s: o.timeBudgetS, seed: o.seed, only: o.only, metrics_port: o.metricsPort, jobs: o.jobs },
    started: new Date(started).toISOString(),
    command: process.argv.slice(2),
    runs: planned,
    ...(o.shard ? { shard: o.shard } : {}),
  };
  writePlan(soakDir, plan);
  linkLatest(o.store, soakDir);
  const share = o.shard ? `, shard ${shardText(o.shard)}: ${planned.length} of ${o.configurations.length * o.testCount} runs` : "";
  const jobs = o.jobs > 1 ? `, ${o.jobs} runs at once` : "";
  o.log(`fencecheck soak: matrix ${o.matrix.name} (${o.configurations.length} configuration${o.configurations.length === 1 ? "" : "s"} x ${o.testCount})${share}${jobs}, seed ${o.seed}, soak directory ${soakDir}`);
  // The runs' own output goes to files; the addresses a Prometheus needs are said here, once.
  if (o.metricsPort !== null) o.log(`fencecheck soak: ${metricsText(o.metricsPort, o.jobs)}`);

  let interrupted: NodeJS.Signals | null = null;
  /** The runs going now, by job. */
  const current = new Map<number, RunningRun>();
  const onSignal = (sig: NodeJS.Signals): void => {
    // A terminal's Ctrl-C reaches the runs too (same process group); passing it on
    // covers a signal sent to the soak alone. A run ignores the echo.
    if (!interrupted) o.log(`\n${sig}: stopping after the current run${o.jobs > 1 ? "s are" : " is"} healed and torn down; the summary will cover what finished`);
    interrupted ??= sig;
    for (const run of current.values()) run.signal(sig);
  };
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, onSignal);

  const records: RunRecord[] = [];
  const notRun: Array<PlannedRun & { reason: string }> = [];
  const estimate = estimator(o);
  // Round-robin holds only if, once a run does not fit, no later round starts:
  // a shorter configuration could still fit and would pull two runs ahead.
  let lastRound = Infinity;
  let next = 0;
  /** Job `job` takes the next planned run until none is left, or the soak is stopped. */
  const job = async (job: number): Promise<void> => {
    for (let i = next++; i < planned.length; i = next++) {
      const p = planned[i];
      const elapsedS = (Date.now() - started) / 1000;
      if (interrupted) {
        notRun.push({ ...p, reason: `the soak was interrupted (${interrupted}) before it started` });
        continue;
      }
      const needS = estimate.of(p.config);
      if (p.index > lastRound) {
        notRun.push({ ...p, reason: `did not fit the time budget: ${Math.max(0, Math.round(o.timeBudgetS! - elapsedS))} s of ${o.timeBudgetS} s left after a run of round ${lastRound + 1} did not fit (later rounds are not started, so configurations share the budget evenly)` });
        continue;
      }
      if (o.timeBudgetS !== null && elapsedS + needS > o.timeBudgetS) {
        lastRound = Math.min(lastRound, p.index);
        notRun.push({ ...p, reason: `did not fit the time budget: ${Math.max(0, Math.round(o.timeBudgetS - elapsedS))} s of ${o.timeBudgetS} s left, about ${Math.round(needS)} s needed` });
        continue;
      }
      const argv = o.metricsPort === null ? p.argv : withMetricsPort(p.argv, o.metricsPort + job);
      const run = startRun({ config: p.config, index: p.index, seed: p.seed, argv, soakDir, outputFile: join(soakDir, SOAK_FILES.output, `${p.config}-${p.index}.log`) });
      current.set(job, run);
      const record = await run.done;
      current.delete(job);
      records.push(record);
      appendRecord(soakDir, record);
      estimate.saw(record);
      // The runs not started yet, spread over the jobs, after the ones going now.
      const left = planned.slice(next).reduce((s, r) => s + estimate.of(r.config), 0) / o.jobs;
      const eta = o.timeBudgetS === null ? left : Math.min(left, Math.max(0, o.timeBudgetS - (Date.now() - started) / 1000));
      o.log(`[${records.length}/${planned.length} · ${duration((Date.now() - started) / 1000)} · ETA ${interrupted ? "-" : duration(eta)}] ${runLine(record)}`);
    }
  };
  // The handlers stay until the summary is written: a second Ctrl-C must not cut it short.
  try {
    await Promise.all(Array.from({ length: Math.max(1, o.jobs) }, (_, j) => job(j)));
    const summary = await finishSoak({
      soakDir,
      store: o.store,
      plan,
      records,
      notRun,
      wallS: (Date.now() - started) / 1000,
      interrupted: interrupted !== null,
      compare: o.compare,
      keepRuns: o.keepRuns,
    });
    return { soakDir, summary };
  } finally {
    for (const s of signals) process.off(s, onSignal);
  }
}

/** Where the runs' metrics are served, said once at the start. */
export function metricsText(port: number, jobs: number): string {
  if (jobs <= 1) return `metrics at http://127.0.0.1:${port}/metrics while a run is going (each run serves them in turn)`;
  return `metrics at http://127.0.0.1:${port}/metrics to http://127.0.0.1:${port + jobs - 1}/metrics while runs are going (job j of ${jobs} serves its run's on port ${port} + j; one scrape job of ${jobs} targets covers them)`;
}

/** A run's arguments with its job's metrics port in place of the soak's. */
export function withMetricsPort(argv: readonly string[], port: number): string[] {
  const out = [...argv];
  const at = out.indexOf("--metrics-port");
  if (at >= 0) out[at + 1] = String(port);
  else out.push("--metrics-port", String(port));
  return out;
}

/** One finished run: configuration, seed, verdict, anomaly types, wall time. */
export function runLine(r: RunRecord): string {
  const what = r.anomaly_types.length ? ` ${r.anomaly_types.map((t) => `${t} ×${r.anomaly_counts[t] ?? "?"}`).join(", ")}` : "";
  const err = r.error && (r.status === "crashed" || r.status === "interrupted") ? `: ${r.error}` : "";
  return `${r.config} #${r.index} seed ${r.seed}: ${r.status.toUpperCase()}${what}${err} (${r.wall_s.toFixed(1)} s)${r.run_dir ? ` ${r.run_dir}` : ""}`;
}

/** How long a run of each configuration takes: its slowest so far, else its time limit plus the largest overhead seen. */
function estimator(o: SoakOptions): { of(config: string): number; saw(r: RunRecord): void } {
  const limitOf = new Map(o.configurations.map((c) => [c.name, o.timeLimitS ?? (typeof c.options["time-limit"] === "number" ? c.options["time-limit"] : Number(c.options["time-limit"] ?? DEFAULT_TIME_LIMIT_S))]));
  const slowest = new Map<string, number>();
  let overhead = DEFAULT_OVERHEAD_S;
  let measured = false;
  return {
    of: (config) => slowest.get(config) ?? (limitOf.get(config) ?? DEFAULT_TIME_LIMIT_S) + overhead,
    saw: (r) => {
      if (r.status === "interrupted") return;
      slowest.set(r.config, Math.max(slowest.get(r.config) ?? 0, r.wall_s));
      const extra = r.wall_s - (limitOf.get(r.config) ?? DEFAULT_TIME_LIMIT_S);
      overhead = measured ? Math.max(overhead, extra) : Math.max(1, extra);
      measured = true;
    },
  };
}
