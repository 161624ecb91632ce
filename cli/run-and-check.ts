// What every command that runs a test does once it has one: run it, check the
// history, write the report, print the verdict, and exit with the code
// docs/history-format.md gives it. `fencecheck test` and `scenario` share it, so a
// scenario's run is a test's run.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { exitCodeFor } from "../lib/index.ts";
import { SPANS_FILE, runTest, type Test } from "../runner/index.ts";
import type { Results } from "../store/events.ts";

export interface Verdict {
  code: number;
  runDir: string;
  /** null when the run was interrupted before it could be checked. */
  results: Results | null;
  /** The summary printed (null when interrupted). */
  summary: string | null;
  /** --otel: the trace check of the run's own spans, stored as a run of its own beside it (null: no spans to check, or the check refused them). */
  traces?: { runDir: string; results: Results; code: number } | null;
}

export interface Say {
  /** The verdict and the run directory (stdout for the command). */
  out(line: string): void;
  /** Progress and warnings (stderr for the command). */
  log(line: string): void;
}

const terminal: Say = { out: (l) => void process.stdout.write(`${l}\n`), log: (l) => void process.stderr.write(`${l}\n`) };

export async function runAndCheck(test: Test, say: Say = terminal): Promise<Verdict> {
  // The checker and the report, half of this command's code, are loaded while the
  // operations run (the process is idle then), not before the run starts.
  let checker: Promise<typeof import("./check-run.ts")> | null = null;
  const load = (): Promise<typeof import("./check-run.ts")> => (checker ??= import("./check-run.ts"));
  const { runDir, interrupted } = await runTest(test, say.log, () => void load().catch(() => {}));
  if (interrupted) {
    say.log(`Interrupted; the history so far is in ${runDir}. Check it with: fencecheck check ${runDir}`);
    return { code: 130, runDir, results: null, summary: null };
  }
  const { results, summary, warnings } = await (await load()).checkAndReport(runDir);
  for (const w of warnings) say.log(`warning: ${w}`);
  say.out(summary);
  say.out(`Run directory: ${runDir}`);
  const verdict: Verdict = { code: exitCodeFor(results.valid), runDir, results, summary };
  if (test.otel) verdict.traces = await traceCheck(test, runDir, results, say);
  return verdict;
}

const VERDICT_WORD = { true: "VALID", false: "INVALID", unknown: "UNKNOWN" } as const;
const word = (r: Results): string => `${VERDICT_WORD[String(r.valid) as keyof typeof VERDICT_WORD]}${r.anomaly_types.length ? ` (${r.anomaly_types.join(", ")})` : ""}`;

/**
 * --otel: the spans the run's collector wrote, checked by the trace check
 * (`fencecheck traces`) into a run of their own in the same store, and its
 * verdict printed beside the run's. The run's exit code stays the run's: the
 * trace check is a second opinion from the same events, seen through the SDK.
 */
async function traceCheck(test: Test, runDir: string, own: Results, say: Say): Promise<Verdict["traces"]> {
  const spans = join(runDir, SPANS_FILE);
  if (!existsSync(spans)) {
    say.out(`trace check: no spans (${spans} was not written)`);
    return null;
  }
  const { checkTraceFiles } = await import("./traces.ts");
  try {
    // The clock nemesis on the workers moves their wall clocks, which the SDK reads
    // for each span's start: the trace check is told by how much at most.
    const clockError = test.workerClocks && test.nemeses.includes("clock") ? String(test.nemesisOptions.clockOffsetMs) : "0";
    const t = await checkTraceFiles([spans], test.store, { test: `traces-${test.name}`, command: ["traces", "--clock-error", clockError, spans], clockError });
    for (const w of t.warnings) say.log(`warning: trace check: ${w}`);
    const agree = t.results.valid === own.valid ? "agrees with" : "DIFFERS from";
    say.out(`trace check: ${word(t.results)}, ${agree} the run's ${word(own)} (run ${t.runDir})`);
    say.out(t.gaps);
    if (clockError !== "0") say.out(t.clocks);
    const possible = t.results.possible?.anomaly_types ?? [];
    if (possible.length) say.out(`  possible only, within the clock bound: ${possible.map((p) => `${p} ×${t.results.possible!.anomaly_counts[p]}`).join(", ")}`);
    return { runDir: t.runDir, results: t.results, code: t.exitCode };
  } catch (err) {
    if (!(err instanceof Error) || err.name !== "BadInput") throw err;
    say.out(`trace check: the spans were refused: ${err.message}`);
    return null;
  }
}
