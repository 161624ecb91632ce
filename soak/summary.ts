// What a soak proves, per configuration, from its plan and the records of the runs
// that finished: how many runs gave which verdict, whether the configuration met
// its expectation, which anomalies showed and how often, and the soak's exit code
// by Jepsen's test-all rule. Pure: the same records always give the same summary,
// whether the soak is still live or `--summarize` rebuilds it from disk.
import { describeExpectation, type Configuration, type Expectation } from "./matrix.ts";
import type { MergedFrom, PlannedRun, RunRecord, SoakPlan } from "./records.ts";
import type { Shard } from "./plan.ts";
import type { OptionValue } from "../lib/index.ts";

/** What moved since the soak compared with (compare.ts finds them). */
export type ChangeKind = "newly-failing" | "fixed" | "new-anomaly-type" | "anomaly-type-gone" | "detection-fell" | "new-crashes" | "crashes-gone" | "added" | "removed";

export interface Change {
  config: string;
  kind: ChangeKind;
  sentence: string;
}

export type ExpectationStatus = "met" | "missed" | "not-judged" | "observed";

export interface Detection {
  type: string;
  found: number;
  /** Runs checked (valid, invalid or unknown): the denominator of the rate. */
  runs: number;
  rate: number;
  min: number;
}

export interface ConfigSummary {
  name: string;
  description: string;
  /** The configuration's test:jepsen options, as the matrix gave them (absent in summaries written before they were kept). */
  options?: Record<string, OptionValue>;
  expect: Expectation;
  expect_text: string;
  planned: number;
  counts: { valid: number; invalid: number; unknown: number; crashed: number; interrupted: number; not_run: number };
  expectation: ExpectationStatus;
  /** One sentence: why the expectation was met, missed or not judged. */
  why: string;
  /** Runs in which each anomaly type was found. */
  anomalies: Record<string, number>;
  /** Witnesses of each type, over all runs. */
  witnesses: Record<string, number>;
  /** Unsafe configurations: each expected type's detection rate. */
  detection: Detection[];
  /**
   * Runs in which fencing refused at least one stale write, of the checked runs
   * that say (null: none does): with fencing on, the share of runs where "valid"
   * meant fencing worked rather than that no fault made a stale holder.
   */
  exercised: { runs: number; refused: number; rate: number; min: number | null } | null;
  /** Median over its runs of each run's acquire p50 and p99, ms. */
  acquire_ms: { p50: number; p99: number } | null;
  /**
   * Runs whose history can tell (format 2, an adapter program): holds certainly
   * lost, how many the library told its user of, and the median over the runs of
   * each run's median delay of telling, ms. Absent when no run could tell.
   */
  lost_holds?: { runs: number; holds: number; told: number; told_after_p50_ms: number | null };
  faults: Record<string, number>;
  runs: RunRecord[];
  not_run: Array<PlannedRun & { reason: string }>;
}

export interface SoakSummary {
  format: 1;
  kind: "soak-summary";
  matrix: { name: string; source: string; hash: string };
  started: string;
  finished: string;
  wall_s: number;
  seed: number;
  test_count: number;
  interrupted: boolean;
  /** Bytes the soak directory takes on disk (runs included). */
  disk_bytes: number | null;
  /** Whether the run directories were removed by --keep-runs; the summary stays. */
  runs_pruned: boolean;
  exit_code: number;
  /** One line for the whole soak. */
  verdict: string;
  compared_with: string | null;
  changes: Change[];
  configurations: ConfigSummary[];
  /** A shard's summary (--shard): it covers its share of the plan only, and is compared with nothing. */
  shard?: Shard;
  /** A merged soak's (--merge): the shards it was made of, and those missing. */
  merged?: MergedFrom;
}

export interface SummaryInput {
  plan: SoakPlan;
  records: RunRecord[];
  /** Planned runs with no record, and why: the time budget, an interruption, a killed soak. */
  notRun: Array<PlannedRun & { reason: string }>;
  finished: Date;
  wallS: number;
  interrupted: boolean;
  diskBytes: number | null;
}

export const EXIT_INTERRUPTED = 130;

export function summarize(input: SummaryInput, changes: Change[] = [], comparedWith: string | null = null): SoakSummary {
  const { plan } = input;
  const configurations = plan.matrix.configurations.map((c) =>
    configSummary(
      c,
      plan.runs.filter((r) => r.config === c.name).length,
      input.records.filter((r) => r.config === c.name).sort((a, b) => a.index - b.index),
      input.notRun.filter((r) => r.config === c.name),
    ),
  ).filter((c) => c.planned > 0);
  const missing = plan.merged?.missing ?? [];
  let exit_code = input.interrupted ? EXIT_INTERRUPTED : exitCodeOf(configurations);
  // A merge that lacks a shard did not run the matrix, so it cannot pass: it is
  // not known what the missing runs would have shown. As Jepsen's test-all puts
  // unknown, that is above a missed expectation and below a crash.
  if (missing.length && (exit_code === 0 || exit_code === 1)) exit_code = 2;
  return {
    format: 1,
    kind: "soak-summary",
    matrix: { name: plan.matrix.name, source: plan.matrix.source, hash: plan.matrix.hash },
    started: plan.started,
    finished: input.finished.toISOString(),
    wall_s: Math.round(input.wallS * 10) / 10,
    seed: plan.options.seed,
    test_count: plan.options.test_count,
    interrupted: input.interrupted,
    disk_bytes: input.diskBytes,
    runs_pruned: false,
    exit_code,
    verdict: verdictLine(configurations, exit_code, missing.length ? `INCOMPLETE: shard${missing.length === 1 ? "" : "s"} ${missing.join(", ")} of ${plan.merged!.count} missing (${missing.length === 1 ? "its" : "their"} runs are counted not run)` : null),
    compared_with: comparedWith,
    changes,
    configurations,
    ...(plan.shard ? { shard: plan.shard } : {}),
    ...(plan.merged ? { merged: plan.merged } : {}),
  };
}

/** Jepsen's test-all: 255 if a run crashed, else 2 if one was unknown, else 1 if an expectation was missed, else 0. */
export function exitCodeOf(configs: ConfigSummary[]): number {
  if (configs.some((c) => c.counts.crashed > 0)) return 255;
  if (configs.some((c) => c.counts.unknown > 0)) return 2;
  if (configs.some((c) => c.expectation === "missed")) return 1;
  return 0;
}

function lostHoldsSummary(runs: RunRecord[]): Pick<ConfigSummary, "lost_holds"> {
  const told = runs.flatMap((r) => (r.lost_holds ? [r.lost_holds] : []));
  if (told.length === 0) return {};
  const delays = told.flatMap((l) => (l.told_after_p50_ms === null ? [] : [l.told_after_p50_ms]));
  return {
    lost_holds: {
      runs: told.length,
      holds: told.reduce((s, l) => s + l.holds, 0),
      told: told.reduce((s, l) => s + l.told, 0),
      told_after_p50_ms: delays.length ? median(delays) : null,
    },
  };
}

function configSummary(c: Configuration, planned: number, runs: RunRecord[], notRun: Array<PlannedRun & { reason: string }>): ConfigSummary {
  const counts = { valid: 0, invalid: 0, unknown: 0, crashed: 0, interrupted: 0, not_run: notRun.length };
  const anomalies: Record<string, number> = {};
  const witnesses: Record<string, number> = {};
  const faults: Record<string, number> = {};
  for (const r of runs) {
    counts[r.status]++;
    for (const t of r.anomaly_types) anomalies[t] = (anomalies[t] ?? 0) + 1;
    for (const [t, n] of Object.entries(r.anomaly_counts)) witnesses[t] = (witnesses[t] ?? 0) + n;
    for (const [f, n] of Object.entries(r.faults)) faults[f] = (faults[f] ?? 0) + n;
  }
  const checked = counts.valid + counts.invalid + counts.unknown;
  const detection: Detection[] =
    c.expect.kind === "find"
      ? Object.entries(c.expect.find).map(([type, min]) => {
          const found = anomalies[type] ?? 0;
          return { type, found, runs: checked, rate: checked ? found / checked : 0, min: min as number };
        })
      : [];
  const told = runs.filter((r) => r.status !== "crashed" && r.status !== "interrupted" && typeof r.stale_writes_refused === "number");
  const refused = told.filter((r) => r.stale_writes_refused! > 0).length;
  const min = c.expect.kind === "valid" ? (c.expect.exercised ?? null) : null;
  const exercised = told.length ? { runs: told.length, refused, rate: refused / told.length, min } : min === null ? null : { runs: 0, refused: 0, rate: 0, min };
  const { expectation, why } = judge(c.expect, checked, anomalies, detection, exercised, { runs: counts.unknown, ...brokeAdapters(runs) });
  const lat = runs.map((r) => r.acquire_ms).filter((l): l is { p50: number; p99: number } => l !== null);
  return {
    name: c.name,
    description: c.description,
    options: c.options,
    expect: c.expect,
    expect_text: describeExpectation(c.expect),
    planned,
    counts,
    expectation,
    why,
    anomalies,
    witnesses,
    detection,
    exercised,
    acquire_ms: lat.length ? { p50: median(lat.map((l) => l.p50)), p99: median(lat.map((l) => l.p99)) } : null,
    ...lostHoldsSummary(runs),
    faults,
    runs,
    not_run: notRun,
  };
}

/** Of the UNKNOWN runs, those whose adapter broke the protocol, and how often in all. */
function brokeAdapters(runs: RunRecord[]): { broke: number; errors: number } {
  const broke = runs.filter((r) => r.status === "unknown" && (r.protocol_errors ?? 0) > 0);
  return { broke: broke.length, errors: broke.reduce((n, r) => n + r.protocol_errors!, 0) };
}

function judge(
  expect: Expectation, checked: number, anomalies: Record<string, number>, detection: Detection[], exercised: ConfigSummary["exercised"], unproved: { runs: number; broke: number; errors: number },
): { expectation: ExpectationStatus; why: string } {
  if (checked === 0) return { expectation: "not-judged", why: "no run was checked, so there is nothing to judge" };
  if (expect.kind === "observe") {
    const found = Object.entries(anomalies);
    return { expectation: "observed", why: found.length ? found.map(([t, n]) => `${t} in ${n} of ${checked} runs`).join(", ") : `no anomaly in ${checked} checked run${checked === 1 ? "" : "s"}` };
  }
  if (expect.kind === "valid") {
    const found = Object.entries(anomalies);
    const used = exercised && exercised.min !== null ? `, stale writes refused in ${exercised.refused} of ${exercised.runs}` : "";
    // "valid" is a claim about every run: one the checker could not prove valid (an
    // adapter that broke the protocol, a log that lost lines) does not support it.
    if (found.length === 0 && unproved.runs > 0) {
      const adapter = unproved.broke ? ` (${unproved.broke} of them because the adapter broke the protocol, ${unproved.errors} time${unproved.errors === 1 ? "" : "s"} in all: see each run's protocol-errors.ndjson)` : "";
      return { expectation: "missed", why: `expected valid, but ${unproved.runs} of ${checked} checked run${checked === 1 ? " was" : "s were"} UNKNOWN${adapter}: no anomaly, and no proof either` };
    }
    if (found.length === 0 && exercised && exercised.min !== null && exercised.rate < exercised.min)
      return {
        expectation: "missed",
        why: `no anomaly in ${checked} checked run${checked === 1 ? "" : "s"}, but fencing refused a stale write in only ${exercised.refused} of ${exercised.runs} (${pct(exercised.rate)}, at least ${pct(exercised.min)} expected): in the others no fault made a stale holder, so "valid" proved little`,
      };
    if (found.length === 0) return { expectation: "met", why: `no anomaly in ${checked} checked run${checked === 1 ? "" : "s"}${used}` };
    return {
      expectation: "missed",
      why: `expected valid, but ${found.map(([t, n]) => `${t} showed in ${n} of ${checked} runs`).join(", ")}: a regression of the lock or a false alarm of the checker`,
    };
  }
  const short = detection.filter((d) => d.rate < d.min);
  if (short.length === 0) return { expectation: "met", why: detection.map((d) => `${d.type} found in ${d.found} of ${d.runs} runs (at least ${pct(d.min)} expected)`).join("; ") };
  return {
    expectation: "missed",
    why: short.map((d) => `${d.type} found in ${d.found} of ${d.runs} runs (${pct(d.rate)}), below the ${pct(d.min)} expected: the lock no longer fails this way, or the runs no longer exercise it (their acquires and faults say which)`).join("; "),
  };
}

function verdictLine(configs: ConfigSummary[], exit: number, incomplete: string | null): string {
  const missed = configs.filter((c) => c.expectation === "missed").map((c) => c.name);
  const crashed = configs.filter((c) => c.counts.crashed > 0).map((c) => c.name);
  const unknown = configs.filter((c) => c.counts.unknown > 0).map((c) => c.name);
  const parts: string[] = [];
  if (incomplete) parts.push(incomplete);
  if (exit === EXIT_INTERRUPTED) parts.push("INTERRUPTED: the summary covers the runs that finished");
  if (crashed.length) parts.push(`CRASHED runs in ${crashed.join(", ")}`);
  if (unknown.length) parts.push(`UNKNOWN runs in ${unknown.join(", ")}`);
  if (missed.length) parts.push(`MISSED expectation: ${missed.join(", ")}`);
  const notJudged = configs.filter((c) => c.expectation === "not-judged").map((c) => c.name);
  if (notJudged.length) parts.push(`NOT JUDGED (no run checked): ${notJudged.join(", ")}`);
  const observed = configs.filter((c) => c.expectation === "observed").length;
  if (parts.length === 0)
    parts.push(observed === 0 ? `PASSED: every configuration met its expectation` : observed === configs.length ? `OBSERVED: ${observed} configurations run, no claim made for any` : `PASSED: every configuration met its expectation, ${observed} more observed`);
  return parts.join("; ");
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}
