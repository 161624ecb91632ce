// The property the fuzz holds the checkers to: for a generated run directory, the
// fast checker and the other one (the reference) give the same verdict, anomaly
// types and counts. One case is a Plan, written to a temporary run directory,
// checked by both, and removed. A checker that throws on a generated run fails the
// property too: the generator writes only input the format allows, so a refusal
// is a bug of the generator or of the checker, and worth a look either way.
import fc from "fast-check";
import { fast, type Checker, type Verdict } from "./checkers.ts";
import { compare, verdictLine, type Comparison } from "./compare.ts";
import { planArb, type Plan } from "./plan.ts";
import { tempRun } from "./run-dir.ts";
import { situationsOf, type Situation } from "./situations.ts";

export interface CaseResult {
  plan: Plan;
  fast: Verdict | { error: string };
  other: Verdict | { error: string };
  comparison: Comparison;
  situations: Set<Situation>;
}

const isVerdict = (v: Verdict | { error: string }): v is Verdict => !("error" in v);

async function guarded(check: Checker, dir: string, plan: Plan): Promise<Verdict | { error: string }> {
  try {
    return await check(dir, { liveness: plan.liveness });
  } catch (err) {
    return { error: (err as Error).message ?? String(err) };
  }
}

/** One case: its run written, checked by the fast checker and by `other`, removed. */
export async function runCase(plan: Plan, other: Checker, id = "case"): Promise<CaseResult> {
  const run = tempRun(plan, id);
  try {
    const a = await guarded(fast, run.dir, plan);
    const b = await guarded(other, run.dir, plan);
    const situations = situationsOf(run.execution.header, run.execution.events, run.execution.decisions);
    if (plan.clockErrorMs > 0) situations.add("clock-bounds");
    if (isVerdict(a) && Object.keys(a.possible_counts).length > 0) situations.add("possible-only");
    let comparison: Comparison;
    if (isVerdict(a) && isVerdict(b)) comparison = withProtocolRule(compare(a, b), run.execution.protocolErrors.length, { fast: a, other: b });
    else {
      const who = isVerdict(a) ? "the other checker" : "the fast checker";
      comparison = { differences: [`${who} threw: ${isVerdict(a) ? (b as { error: string }).error : a.error}`], signature: `threw ${who}`, orderDiffers: false };
    }
    return { plan, fast: a, other: b, comparison, situations };
  } finally {
    run.remove();
  }
}

/**
 * Both checkers agreeing is not enough where both could ignore a file: each must
 * count every protocol-errors.ndjson line the run wrote, and a run with any is
 * never VALID (docs/history-format.md, "protocol-errors.ndjson").
 */
function withProtocolRule(c: Comparison, written: number, verdicts: Record<string, Verdict>): Comparison {
  const broken = Object.entries(verdicts).flatMap(([who, v]) => [
    ...(v.protocol_errors !== written ? [`the ${who} checker counted ${v.protocol_errors} protocol errors of the ${written} written`] : []),
    ...(written > 0 && v.valid === true ? [`the ${who} checker found VALID a run with ${written} protocol errors`] : []),
  ]);
  return broken.length ? { ...c, differences: [...c.differences, ...broken], signature: c.differences.length ? c.signature : "protocol-errors rule" } : c;
}

/** A verdict or the error a checker threw, in one line. */
export function outcomeLine(v: Verdict | { error: string }): string {
  return isVerdict(v) ? verdictLine(v) : `threw: ${v.error}`;
}

export { isVerdict };

/**
 * The property for fast-check: the two checkers agree on every generated run.
 * `seen` hears every case checked, shrinks included. With `signature`, only a
 * disagreement of that kind fails it: for shrinking a case found, so that the
 * smallest case kept shows the disagreement that was found, not another one met
 * on the way.
 */
export function agreement(other: Checker, seen?: (r: CaseResult) => void, signature?: string): fc.IAsyncPropertyWithHooks<[Plan]> {
  return fc.asyncProperty(planArb, async (plan) => {
    const r = await runCase(plan, other);
    seen?.(r);
    if (r.comparison.differences.length === 0) return true;
    return signature !== undefined && r.comparison.signature !== signature;
  });
}
