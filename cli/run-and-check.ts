// What every command that runs a test does once it has one: run it, check the
// history, write the report, print the verdict, and exit with the code
// docs/history-format.md gives it. `fencecheck test` and `scenario` share it, so a
// scenario's run is a test's run.
import { exitCodeFor } from "../lib/index.ts";
import { runTest, type Test } from "../runner/index.ts";
import type { Results } from "../store/events.ts";

export interface Verdict {
  code: number;
  runDir: string;
  /** null when the run was interrupted before it could be checked. */
  results: Results | null;
  /** The summary printed (null when interrupted). */
  summary: string | null;
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
  return { code: exitCodeFor(results.valid), runDir, results, summary };
}
