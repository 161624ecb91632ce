// The reference checker: the checker a reader reads first.
//
// fencecheck's fast checker (checker/*.ts) reads a run in one streaming pass with
// indexes and sweeps, which is quick and hard to read. This one is written again
// from the documents alone, docs/history-format.md and docs/anomalies.md (with
// the rules changed on 2026-11-29), without looking at the fast checker's code, so that the two
// do not share their bugs: on every history their `valid`, `anomaly_types` and
// `stats.anomaly_counts` should be equal, and where they are not, one of them is
// wrong. It reads each file whole with JSON.parse per line, keeps plain arrays
// and objects, and is quadratic where that is clearest. Each file implements one
// rule or family of rules and cites the section it follows:
//
//   reader.ts    the run directory, history.ndjson (formats 1 and 2),
//                resource.ndjson, run.json, protocol-errors.ndjson; bad
//                input; cut-short last lines;
//                (time, index) order; pairing invokes with completions
//   holds.ts     holds and their certainly valid spans (amended 2026-11-29);
//                mutex-violation, rw-violation, semaphore-overflow,
//                lost-lock-unnoticed, expired-on-arrival, orphan-lock-node
//   writes.ts    stale-write-accepted, interleaved-writers, false-rejection,
//                lost-update, from the resource log and from the history alone;
//                committed decisions (`order`, `accepted: null`); the log can
//                only weaken what the history proves (amended 2026-11-29)
//   fences.ts    duplicate-fence, fence-regression
//   kinds.ts     reentrancy-violation (with re-entry by another process,
//                amended 2026-11-29), grant-after-cancel
//   liveness.ts  stuck-lock
//   clocks.ts    run.json's clock_error: certain and possible findings where
//                clocks may be off (a trace's hosts)
//   verdict.ts   the order of anomaly types, the witnesses kept, valid/unknown
//   describe.ts  the words of witnesses
//
// What it covers: every anomaly type that decides a verdict by default, for
// formats 1 and 2 and every lock kind (mutex, reentrant, rw, semaphore);
// withdrawn acquires (cancels); committed decisions with `order` and
// `accepted: null`; a killed run's cut-short last line and lines out of time
// order; every reason docs/anomalies.md gives for UNKNOWN but the model check's,
// an adapter program's protocol errors (protocol-errors.ndjson) among them.
// `stuck-lock` (format 2) is in it: reported under `liveness`, and counted as an
// anomaly under --liveness strict (the option, else run.json's
// options.liveness).
//
// What it does NOT cover, and why:
//   - the linearizability model check behind --model strict
//     (strict-mutex-violation, strict-rw-violation, strict-semaphore-violation):
//     a Wing-Gong search with memoisation and a time budget is not something a
//     reader can check by eye, which is this checker's point; a run whose
//     run.json asks for --model strict is checked as under --model lease, with a
//     warning. The reference therefore never gives the model's UNKNOWN reasons.
//   - fairness (stats.fairness), lost-hold figures (stats.lost_holds), lease
//     overlaps, fenced-read counts and the other stats: they change no verdict.
//   - report.html: `fencecheck check --reference` writes results.json only.
import { readRun } from "./reader.ts";
import { buildHolds, expiredOnArrival, lostLockUnnoticed, orphanLockNode, pairViolations, semaphoreOverflow } from "./holds.ts";
import { judgeWrites } from "./writes.ts";
import { duplicateFence, fenceRegression } from "./fences.ts";
import { grantAfterCancel, reentrancy } from "./kinds.ts";
import { stuckLock } from "./liveness.ts";
import { verdict, type ReferenceResults } from "./verdict.ts";
import { placeRun } from "./clocks.ts";
import type { Findings, Header, Run, Witness } from "./types.ts";

export { ORDER, type ReferenceResults } from "./verdict.ts";
export type { Header } from "./types.ts";

export interface ReferenceOptions {
  liveness?: "lenient" | "strict";
}

export async function referenceCheck(runDir: string, options: ReferenceOptions = {}): Promise<{ results: ReferenceResults; warnings: string[]; header: Header }> {
  const run = readRun(runDir);
  const warnings = [...run.warnings];
  if (run.options.model === "strict")
    warnings.push("run.json asks for --model strict; the reference checker has no model check and judges the run as under --model lease");
  if (!run.clock) return { results: judge(run, options), warnings, header: run.header };
  // Clocks that may be off (clocks.ts): the verdict is the certain findings'; the rest of the favourable placement's are listed as possible.
  const results = judge(placeRun(run, run.clock, true), options);
  const best = judge(placeRun(run, run.clock, false), options);
  const same = (t: string, w: Witness) => `${t} ${[...(w.events ?? [])].sort((a, b) => a - b)} ${[...(w.seqs ?? [])].sort((a, b) => a - b)}`;
  const certain = new Set(Object.entries(results.anomalies).flatMap(([t, ws]) => ws.map((w) => same(t, w))));
  const possible: NonNullable<ReferenceResults["possible"]> = { anomaly_types: [], anomalies: {}, anomaly_counts: {} };
  for (const t of best.anomaly_types) {
    // Counted as how many more the favourable placement finds (the witnesses quoted for the same holds may differ between placements).
    const more = best.stats.anomaly_counts[t] - (results.stats.anomaly_counts[t] ?? 0);
    if (more <= 0) continue;
    const only = best.anomalies[t].filter((w) => !certain.has(same(t, w)));
    possible.anomaly_types.push(t);
    possible.anomalies[t] = only.length > 0 ? only : best.anomalies[t];
    possible.anomaly_counts[t] = more;
  }
  return { results: { ...results, possible }, warnings, header: run.header };
}

/** Every rule on the run as read (or as placed by clocks.ts). */
function judge(run: Run, options: ReferenceOptions): ReferenceResults {
  const { holds, strayReentries, duplicateOwners } = buildHolds(run);
  const writes = judgeWrites(run);
  const reent = reentrancy(run, holds, strayReentries);
  const found: Findings = {
    ...writes.findings,
    ...duplicateFence(holds),
    ...fenceRegression(holds),
    ...pairViolations(run, holds, reent.toldPairs),
    ...semaphoreOverflow(run, holds),
    ...lostLockUnnoticed(run, holds),
    ...expiredOnArrival(run),
    ...orphanLockNode(run),
    ...reent.findings,
    ...grantAfterCancel(run),
  };

  // docs/anomalies.md "Why a run is UNKNOWN", in its order.
  const unknownReasons = [...run.unknownReasons];
  unknownReasons.push(...writes.unmatched);
  if (duplicateOwners > 0) unknownReasons.push(`${duplicateOwners} acquires returned an owner already given to another hold of the same key`);
  unknownReasons.push(...writes.counterData);
  // docs/history-format.md "protocol-errors.ndjson": an adapter that broke the protocol leaves the run unproved.
  if (run.protocolErrors.length > 0) {
    const codes = [...new Set(run.protocolErrors)].map((c) => `${c} ×${run.protocolErrors.filter((x) => x === c).length}`).join(", ");
    unknownReasons.push(`the adapter program broke the protocol ${run.protocolErrors.length} time${run.protocolErrors.length === 1 ? "" : "s"} (${codes}; each a line of protocol-errors.ndjson): what it did around them may be missing from the history, so it cannot show the lock was correct`);
  }

  let liveness: { strict: boolean; findings: Findings } | undefined;
  if (run.header.format === 2) {
    const strict = (options.liveness ?? run.options.liveness) === "strict";
    const stuck = stuckLock(run, holds);
    liveness = { strict, findings: stuck };
    if (strict) Object.assign(found, stuck);
  }
  return verdict(found, unknownReasons, run.protocolErrors.length, liveness);
}

/**
 * A rough estimate, in seconds, of how long referenceCheck takes on a history of
 * `events` events: measured 2026-11-29 on a two-core machine shared with other
 * work, 200,000 events of a fenced-write or counter run (one key, holds one
 * after another, with a resource log) took 5 to 6 s, about 30 µs an event.
 * Histories with many holds valid at once on a key take longer: some rules
 * compare every pair of such holds.
 */
export function estimateSeconds(events: number): number {
  return events * 30e-6;
}
