// The two checkers the fuzz holds to each other, behind one shape: the fast one
// (checker/run.ts, what `fencecheck check` runs) and the reference checker
// (checker/reference/), a simple reading of the rules written apart from it. The
// fuzz compares only what both give: the verdict, the anomaly types and their
// counts, why a run is unknown, and how many protocol errors it read.
import { checkRun } from "../../../checker/index.ts";
import { referenceCheck } from "../../../checker/reference/index.ts";

export interface Verdict {
  valid: true | false | "unknown";
  anomaly_types: string[];
  anomaly_counts: Record<string, number>;
  unknown_reasons: string[];
  /** stats.protocol_errors: what both read from protocol-errors.ndjson. */
  protocol_errors: number;
  /** Where run.json has clock bounds: the anomaly types and counts that only some placement of the instants shows (results.json possible). */
  possible_counts: Record<string, number>;
}

export interface CheckOptions {
  liveness: "lenient" | "strict";
}

export type Checker = (dir: string, o: CheckOptions) => Promise<Verdict>;

const counts = (stats: Record<string, unknown>): Record<string, number> => (stats.anomaly_counts ?? {}) as Record<string, number>;
const reasons = (stats: Record<string, unknown>): string[] => (stats.unknown_reasons ?? []) as string[];
// No default: a checker that left the count out has not read the file, and the fuzz says so.
const broke = (stats: Record<string, unknown>): number => stats.protocol_errors as number;

export const fast: Checker = async (dir, o) => {
  const { results } = await checkRun(dir, { liveness: o.liveness });
  return { valid: results.valid, anomaly_types: results.anomaly_types, anomaly_counts: counts(results.stats), unknown_reasons: reasons(results.stats), protocol_errors: broke(results.stats), possible_counts: results.possible?.anomaly_counts ?? {} };
};

export const reference: Checker = async (dir, o) => {
  const { results } = await referenceCheck(dir, { liveness: o.liveness });
  return { valid: results.valid, anomaly_types: results.anomaly_types, anomaly_counts: counts(results.stats), unknown_reasons: reasons(results.stats), protocol_errors: broke(results.stats), possible_counts: results.possible?.anomaly_counts ?? {} };
};

/** `--against fast` (the fast checker on both sides: to measure the fuzz itself, or before the reference is merged) or `reference`. */
export const CHECKERS = { fast, reference } as const;
