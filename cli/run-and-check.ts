// What every command that runs a test does once it has one: run it, check the
// history, write the report, print the verdict, and exit with HISTORY.md's code.
// test:jepsen and scenario share it, so a scenario's run is a test:jepsen run.
import { EXIT, exitCodeFor } from "../lib/index.ts";
import { runTest, type Test } from "../runner/index.ts";
import type { Results } from "../store/events.ts";
import { checkAndReport } from "./check-run.ts";

export interface Verdict {
  code: number;
  runDir: string;
  /** null when the run was interrupted before it could be checked. */
  results: Results | null;
}

export async function runAndCheck(test: Test): Promise<Verdict> {
  const { runDir, interrupted } = await runTest(test);
  if (interrupted) {
    process.stderr.write(`Interrupted; the history so far is in ${runDir}. Check it with: npm run check -- ${runDir}\n`);
    return { code: 130, runDir, results: null };
  }
  const { results, summary, warnings } = await checkAndReport(runDir);
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(summary + "\n");
  process.stdout.write(`Run directory: ${runDir}\n`);
  return { code: exitCodeFor(results.valid), runDir, results };
}

/** Runs a command's main and exits with its code; anything thrown is the tool failing (255). */
export function exitWith(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`fencecheck failed: ${err instanceof Error ? err.message : String(err)}\n`);
      if (process.env.FENCECHECK_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
      process.exit(EXIT.crash);
    },
  );
}
