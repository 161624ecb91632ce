// The verdict: every analysis run over the history, paired once into operations
// and holds (paired.ts), their witnesses gathered per anomaly type, and the run's
// figures. Pure: no files, so tests and
// the runner can hand in a history directly.
import { ANOMALY_TYPES, RUN_FILES, CANCELLED_ERROR, CANCEL_UNKNOWN_ERROR, type AnomalyType, type Results, type Validity, type Witness } from "../store/events.ts";
import { duplicateFences } from "./duplicate-fence.ts";
import { fairnessStats } from "./fairness.ts";
import { falseRejections } from "./false-rejection.ts";
import { readStats } from "./fenced-reads.ts";
import { fenceRegressions } from "./fence-regression.ts";
import { expiredOnArrival } from "./expired-on-arrival.ts";
import { lostLocksUnnoticed } from "./lost-lock.ts";
import { lostHoldsStats } from "./lost-holds.ts";
import { orphanLockNodes } from "./orphan-node.ts";
import { interleavedWriters } from "./interleaved.ts";
import { lostUpdates } from "./lost-update.ts";
import { ACQUIRE, pairRun, type Paired, type RunInput } from "./paired.ts";
import { checkModel, type ModelCheck } from "./linearizable/index.ts";
import { checkHolds, type HoldCheck } from "./mutex.ts";
import { anyError, placed, type ClockBounds } from "./clock.ts";
import { auditResourceLog } from "./resource.ts";
import { staleWrites } from "./stale-write.ts";
import { runStats } from "./stats.ts";
import { viewOf, withOwners, type PairedView } from "./shared-paired.ts";
import { falseRejectionsUnderRule, grantsAfterCancel, reentrancyViolations, rwViolations, semaphoreOverflows, staleUnderRule, stuckLocks } from "./kinds/index.ts";
import { startWorker } from "../lib/index.ts";

/** Witnesses kept per type; `stats.anomaly_counts` has the full numbers. */
export const MAX_WITNESSES = 100;

/**
 * The model check's findings under their own name: a lease lets a second holder in
 * when the first one's lease runs out, which a strict mutex forbids, so they count
 * toward the verdict only when asked for (`model: "strict"`).
 */
export const STRICT_MUTEX_VIOLATION = "strict-mutex-violation";
/**
 * An rw lock's and a semaphore's are named for their own model, not the mutex's:
 * the model check of an rw lock lets readers share, and a reader of results.json
 * who saw "mutex" would think the readers' sharing was what it found.
 * A reentrant lock's re-entries are operations of their outermost hold, so its
 * model is the mutex's, and so is the name.
 */
export const STRICT_RW_VIOLATION = "strict-rw-violation";
export const STRICT_SEMAPHORE_VIOLATION = "strict-semaphore-violation";
export const STRICT_VIOLATIONS = [STRICT_MUTEX_VIOLATION, STRICT_RW_VIOLATION, STRICT_SEMAPHORE_VIOLATION] as const;
const STRICT_OF = { mutex: STRICT_MUTEX_VIOLATION, reentrant: STRICT_MUTEX_VIOLATION, rw: STRICT_RW_VIOLATION, semaphore: STRICT_SEMAPHORE_VIOLATION } as const;

export interface CheckOptions {
  /** "lease" (the default): the model check's result goes to stats.model only; "strict": its findings are anomalies too. */
  model?: "lease" | "strict";
  /** "lenient" (the default): liveness findings (stuck-lock) are reported only; "strict": they make the run invalid. */
  liveness?: "lenient" | "strict";
  /** How long waiters may find the lock free and not granted before it is stuck, in ms (default: 4 x the largest lease of an acquire). */
  stuckAfterMs?: number;
  /** Time for the whole model check, in ms. */
  modelBudgetMs?: number;
  /** false (run.json `history_complete`, a trace's run): operations may be missing from the history, so nothing is proved from their absence. */
  historyComplete?: boolean;
  /** How far each process's clock may be off (run.json `clock_error`, a trace's hosts): findings certain and possible (clock.ts). */
  clock?: ClockBounds;
}

export const MODELS = ["lease", "strict"] as const;
export const LIVENESS = ["lenient", "strict"] as const;

/** Witnesses of the model check shown in stats.model when they do not count. */
const MODEL_WITNESSES_IN_STATS = 3;

type Analysis = (m: Paired) => Witness[];

export function analyze(input: RunInput, options: CheckOptions = {}): { results: Results; warnings: string[] } {
  return verdict(pairRun(input), options);
}

/** The verdict on a history already paired (by `pairRun` or a streaming `PairingBuilder`). */
export function verdict(m: Paired, options: CheckOptions = {}): { results: Results; warnings: string[] } {
  if (anyError(options.clock)) return clockedVerdict(m, options.clock, options);
  const own = ownAnalyses(m, options);
  return assemble(m, options, own, checkHolds(m), checkModel(m, options.modelBudgetMs));
}

/**
 * The verdict where clocks may be off (clock.ts): the anomalies found with every
 * instant placed worst for them are the run's, certain; those found only with
 * every instant placed best for them are `possible`, apart, and decide nothing.
 */
function clockedVerdict(m: Paired, clock: ClockBounds, options: CheckOptions): { results: Results; warnings: string[] } {
  const plain = { ...options, clock: undefined };
  const certain = verdict(placed(m, clock, true), plain);
  const best = verdict(placed(m, clock, false), plain).results;
  const seen = new Set(Object.entries(certain.results.anomalies).flatMap(([type, ws]) => ws.map((w) => witnessKey(type, w))));
  const anomalies: Record<string, Witness[]> = {};
  const counts: Record<string, number> = {};
  const bestCounts = (best.stats.anomaly_counts ?? {}) as Record<string, number>;
  const certainCounts = certain.results.stats.anomaly_counts as Record<string, number>;
  for (const [type, ws] of Object.entries(best.anomalies)) {
    // How many more the favourable placement finds: which witnesses each
    // placement quotes for the same holds may differ, the number may not.
    const more = (bestCounts[type] ?? ws.length) - (certainCounts[type] ?? 0);
    if (more <= 0) continue;
    const only = ws.filter((w) => !seen.has(witnessKey(type, w)));
    anomalies[type] = (only.length > 0 ? only : ws).map((w) => ({ ...w, explanation: `${w.explanation} ${POSSIBLE_NOTE}` }));
    counts[type] = more;
  }
  for (const ws of Object.values(certain.results.anomalies)) for (const w of ws) w.explanation = `${w.explanation} ${CERTAIN_NOTE}`;
  const results: Results = {
    ...certain.results,
    possible: { anomaly_types: Object.keys(anomalies), anomalies, anomaly_counts: counts },
    stats: { ...certain.results.stats, clock_error: clock },
  };
  return { results, warnings: certain.warnings };
}

const CERTAIN_NOTE = "(Clocks may be off: the times above are placed worst for this finding, each invoke moved earlier and each completion later by its process's clock bound, so it holds wherever within the bounds they lie.)";
const POSSIBLE_NOTE = "(Possible only: the times above are placed best for this finding, each invoke moved later and each completion earlier by its process's clock bound; placed worst, it does not hold.)";

/** A witness by its type and the events and decisions it rests on, to tell the two placements' findings apart. */
const witnessKey = (type: string, w: Witness): string => `${type} ${[...(w.events ?? [])].sort((a, b) => a - b).join(",")} ${[...(w.seqs ?? [])].sort((a, b) => a - b).join(",")}`;

/**
 * A thread for `verdict`, started now, ahead of the pairing (a thread takes tens of
 * ms to start): `begin(m)` hands it the model's operations and holds, which may
 * be before the decisions are in (PairingBuilder.group), and it checks the holds'
 * spans and runs the model check unless `modelCheck` is false (its searches take
 * memory of their own), both of which read the operations and holds alone;
 * `verdict(m)` (the pairing finished) does every other analysis on this thread and
 * takes the thread's findings; `stop` ends it unused. The same results as `verdict`.
 */
export function verdictThread(modelCheck = true): {
  begin: (m: Paired, options?: CheckOptions) => void;
  verdict: (m: Paired, options?: CheckOptions) => Promise<{ results: Results; warnings: string[] }>;
  stop: () => void;
} {
  const worker = startWorker("checker/verdict-thread");
  const answer = new Promise<{ holds: HoldCheck; model: ModelCheck | null }>((done, fail) => {
    worker.once("message", done);
    worker.once("error", fail);
    worker.once("exit", (code) => fail(new Error(`the verdict's thread exited (${code}) before it answered`)));
  });
  // Settled later than it may fail: a failure is the caller's once it asks.
  answer.catch(() => {});
  const stop = (): void => void worker.terminate();
  let begun = false;
  const begin = (m: Paired, options: CheckOptions = {}): void => {
    if (begun) return;
    begun = true;
    worker.postMessage({ view: viewOf(m), budgetMs: options.modelBudgetMs, modelCheck } satisfies VerdictRequest);
  };
  return {
    begin,
    stop,
    verdict: async (m, options = {}) => {
      try {
        begin(m, options);
        const own = ownAnalyses(m, options);
        const here = modelCheck ? null : checkModel(m, options.modelBudgetMs);
        const { holds, model } = withOwners(await answer, m.owners.names);
        return assemble(m, options, own, holds, model ?? here!);
      } finally {
        stop();
      }
    },
  };
}

/** What verdict-thread.ts is asked. */
export interface VerdictRequest { view: PairedView; budgetMs?: number; modelCheck: boolean }

type Own = ReturnType<typeof ownAnalyses>;

/** Every analysis but the holds' spans and the model check, in the order their notes go to the model. */
function ownAnalyses(m: Paired, options: CheckOptions = {}) {
  const audit = auditResourceLog(m);
  m.unknown.push(...audit.unknown);
  m.warnings.push(...audit.warnings);
  const lock = m.kind?.lock ?? "mutex";
  // An rw lock's and a semaphore's resource rule differ from a mutex's; a
  // semaphore's holders write side by side by design.
  const shared = lock === "rw" || lock === "semaphore";
  const kinds = shared ? (lock === "rw" ? rwViolations(m) : semaphoreOverflows(m)) : null;
  const reentrancy = lock === "reentrant" ? reentrancyViolations(m) : null;
  const analyses: Record<AnomalyType, Analysis | null> = {
    "stale-write-accepted": shared ? staleUnderRule : staleWrites,
    "interleaved-writers": lock === "semaphore" ? null : interleavedWriters,
    "false-rejection": shared ? falseRejectionsUnderRule : (m) => falseRejections(m, options.historyComplete !== false),
    "duplicate-fence": duplicateFences,
    "fence-regression": fenceRegressions,
    "lost-update": m.header.workload === "counter" ? lostUpdates : null,
    // From the holds' spans (assemble).
    "mutex-violation": null,
    "expired-on-arrival": expiredOnArrival,
    "lost-lock-unnoticed": lostLocksUnnoticed,
    "orphan-lock-node": orphanLockNodes,
    "rw-violation": lock === "rw" ? () => kinds!.witnesses : null,
    "semaphore-overflow": lock === "semaphore" ? () => kinds!.witnesses : null,
    "reentrancy-violation": reentrancy ? () => reentrancy.witnesses : null,
    "grant-after-cancel": m.kind ? grantsAfterCancel : null,
  };
  const found = new Map<AnomalyType, Witness[]>();
  // fence-regression last: by then the second thread has most likely sorted the
  // holds it reads (paired.ts holdsInEndOrder). The analyses are pure, so their
  // order changes nothing else.
  const last: AnomalyType = "fence-regression";
  for (const type of ANOMALY_TYPES) if (type !== last) found.set(type, analyses[type]?.(m) ?? []);
  const reads = readStats(m);
  const fairness = fairnessStats(m, m.ops.reportsQueued ? (i) => m.ops.queuedOf(i) : undefined);
  found.set(last, analyses[last]?.(m) ?? []);
  const stuck = m.kind ? stuckLocks(m, options.stuckAfterMs ?? stuckAfterDefault(m)) : null;
  return { found, reads, fairness, lostHolds: lostHoldsStats(m), shared: kinds, reentrancy, stuck };
}

/** Acquires withdrawn by their clients (format 2): certainly removed, and not known to be. */
function cancelCounts(m: Paired): { cancelled: number; unknown: number } {
  const cancelled = m.errors.names.indexOf(CANCELLED_ERROR), unknown = m.errors.names.indexOf(CANCEL_UNKNOWN_ERROR);
  const c = { cancelled: 0, unknown: 0 };
  if (cancelled < 0 && unknown < 0) return c;
  for (let i = 0; i < m.ops.length; i++) {
    if (m.ops.f[i] !== ACQUIRE) continue;
    if (m.ops.error[i] === cancelled && cancelled >= 0) c.cancelled++;
    else if (m.ops.error[i] === unknown && unknown >= 0) c.unknown++;
  }
  return c;
}

/** Without the run's options: four times the largest lease of an acquire (a lease and the default command timeout of three TTLs), of 1000 ms where none has one (anomalies.md "stuck-lock"). */
function stuckAfterDefault(m: Paired): number {
  let ttl = 0;
  for (let i = 0; i < m.ops.length; i++) if (m.ops.f[i] === ACQUIRE && m.ops.ttl[i] > ttl) ttl = m.ops.ttl[i];
  return 4 * (ttl || 1000);
}

/** The verdict from every analysis's findings. */
function assemble(m: Paired, options: CheckOptions, own: Own, holds: HoldCheck, model: ModelCheck): { results: Results; warnings: string[] } {
  const strict = options.model === "strict";
  const anomalies: Record<string, Witness[]> = {};
  const counts: Record<string, number> = {};
  const mutexViolations = (): Witness[] => {
    // (An rw lock's and a semaphore's holds checkHolds leaves to checker/kinds.)
    const told = own.reentrancy?.told;
    return told ? holds.violations.filter((w) => !told.some(([a, b]) => w.events?.includes(a) && w.events.includes(b))) : holds.violations;
  };
  for (const type of ANOMALY_TYPES) {
    const found = type === "mutex-violation" ? mutexViolations() : own.found.get(type)!;
    if (found.length === 0) continue;
    found.sort(byFirstEvent);
    anomalies[type] = found.slice(0, MAX_WITNESSES);
    counts[type] = found.length;
  }
  // An adapter that broke the protocol may have done more than its history shows: never VALID, INVALID only by an anomaly.
  // (Before the model check's reasons, in docs/anomalies.md's order.)
  if (m.protocolErrors.length > 0) m.unknown.push(protocolErrorsReason(m.protocolErrors));
  const modelStats = { ...model.stats, counted: strict };
  if (strict) {
    const type = STRICT_OF[m.kind?.lock ?? "mutex"];
    if (model.witnesses.length > 0) {
      anomalies[type] = model.witnesses.sort(byFirstEvent).slice(0, MAX_WITNESSES);
      counts[type] = model.witnesses.length;
    }
    for (const { key, reason } of model.stats.unknown_keys) m.unknown.push(`the ${model.stats.model} model check of key ${JSON.stringify(key)} did not finish: ${reason}`);
  } else if (model.witnesses.length > 0) {
    // Not part of the verdict, but a reader of results.json should see why.
    Object.assign(modelStats, { witnesses: model.witnesses.sort(byFirstEvent).slice(0, MODEL_WITNESSES_IN_STATS) });
  }
  const { reads, fairness, lostHolds } = own;
  m.warnings.push(...reads.warnings);
  const liveStrict = options.liveness === "strict";
  const stuck = own.stuck ?? [];
  if (liveStrict && stuck.length > 0) {
    anomalies["stuck-lock"] = stuck.slice(0, MAX_WITNESSES);
    counts["stuck-lock"] = stuck.length;
  }
  const anomaly_types = Object.keys(anomalies);
  const valid: Validity = anomaly_types.length > 0 ? false : m.unknown.length > 0 ? "unknown" : true;
  const leaseOverlaps = own.shared ? own.shared.leaseOverlaps : holds.leaseOverlaps;
  const stats = { ...runStats(m, leaseOverlaps), ...reads.stats, anomaly_counts: counts, unknown_reasons: m.unknown, protocol_errors: m.protocolErrors.length, model: modelStats, fairness, ...(lostHolds ? { lost_holds: lostHolds } : {}), ...(m.kind ? { cancels: cancelCounts(m) } : {}) };
  const warnings = [...m.warnings, ...m.unknown.map((r) => `cannot fully check the run: ${r}`)];
  const liveness = own.stuck ? { liveness: { strict: liveStrict, findings: (stuck.length ? { "stuck-lock": stuck.slice(0, MAX_WITNESSES) } : {}) as Record<string, Witness[]> } } : {};
  return { results: { valid, anomaly_types, anomalies, ...liveness, stats }, warnings };
}

const first = (xs: number[] | undefined): number => (xs && xs.length > 0 ? Math.min(...xs) : Infinity);

function byFirstEvent(a: Witness, b: Witness): number {
  return first(a.events) - first(b.events) || first(a.seqs) - first(b.seqs);
}

/**
 * The unknown reason of a run whose adapter program broke the protocol: how
 * many times, of which codes, and why that leaves the run unproved
 * (docs/anomalies.md, "Why a run is UNKNOWN").
 */
function protocolErrorsReason(codes: readonly string[]): string {
  const by = new Map<string, number>();
  for (const c of codes) by.set(c, (by.get(c) ?? 0) + 1);
  const counted = [...by].map(([code, n]) => `${code} ×${n}`).join(", ");
  return `the adapter program broke the protocol ${codes.length} time${codes.length === 1 ? "" : "s"} (${counted}; each a line of ${RUN_FILES.protocolErrors}): what it did around them may be missing from the history, so it cannot show the lock was correct`;
}
