// Checking a stored run: the one path that `fencecheck check`, the runner after a
// fresh run (run-and-check.ts), the programmatic API and bench:checker take, so a
// stored run and a fresh one get the same verdict. Kept apart from the commands so
// that loading it loads the checker and the report and nothing of the runner.
import { accessSync, constants, mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { checkRun, checkRunKeeping, writeResults, type CheckOptions } from "../checker/index.ts";
import { BadInput, exitCodeFor } from "../lib/index.ts";
import { REPORT_CHECKPOINT_EVERY, renderSummary, reportRun } from "../reports/index.ts";
import type { Results } from "../store/events.ts";

export interface CheckOutcome {
  results: Results;
  /** For stderr: skipped lines, reasons the verdict is unknown. */
  warnings: string[];
  /** The few lines to print. */
  summary: string;
  exitCode: number;
  /** Where results.json and report.html were written. */
  outDir: string;
}

/**
 * BadInput unless `outDir` is a directory this process may write, or can be made
 * as one: checked before the run is read, so that a check of a large run does not
 * end in a failure to write (once "failed: ENOTDIR", exit 255), and nothing is made.
 */
export function usableOutDir(outDir: string): void {
  const named = `the output directory ${outDir}`;
  // The path itself, or the nearest part of it that exists, must be a directory we may write in.
  let at = resolve(outDir);
  for (;;) {
    let isDir: boolean;
    try {
      isDir = statSync(at).isDirectory();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === "ENOENT" && dirname(at) !== at) {
        at = dirname(at);
        continue;
      }
      if (code === "ENOTDIR") throw new BadInput(`${named} cannot be made: a part of its path is a file, not a directory`);
      throw new BadInput(`${named} cannot be used (${code ?? err})`);
    }
    if (!isDir) throw new BadInput(at === resolve(outDir) ? `${named} is a file, not a directory` : `${named} cannot be made: ${at} is a file, not a directory`);
    try {
      accessSync(at, constants.W_OK | constants.X_OK);
    } catch {
      throw new BadInput(at === resolve(outDir) ? `${named} is not writable` : `${named} cannot be made: ${at} is not writable`);
    }
    return;
  }
}

/**
 * The check alone: reads the run in one streaming pass (checker/run.ts) and writes
 * results.json into `outDir` (the run itself by default). Throws BadInput, before
 * writing anything, when the directory or its files are unusable. Options left out
 * come from the run's run.json.
 */
export async function checkOnly(runDir: string, options: CheckOptions = {}, outDir = runDir): Promise<{ results: Results; warnings: string[] }> {
  usableOutDir(outDir);
  const checked = await checkRun(runDir, options);
  mkdirSync(outDir, { recursive: true });
  await writeResults(outDir, checked.results);
  return checked;
}

/**
 * Checks the run in `runDir` and writes results.json, then report.html, into
 * `outDir` (the run itself by default; another directory leaves the run as it
 * was). A large run's report is drawn from what the check's pass kept (its model,
 * the nemesis events, checkpoints into the files) plus the few stretches of the
 * files it draws in full, so the history is read once and never held in memory
 * (reports/index.ts reportRun).
 */
export async function checkAndReport(runDir: string, options: CheckOptions = {}, outDir = runDir, colour?: boolean): Promise<CheckOutcome> {
  usableOutDir(outDir);
  const { results, warnings, run } = await checkRunKeeping(runDir, options, REPORT_CHECKPOINT_EVERY);
  mkdirSync(outDir, { recursive: true });
  await writeResults(outDir, results);
  const { header } = await reportRun(runDir, results, { checked: run, outDir });
  return {
    results,
    warnings,
    summary: renderSummary({ header, results, colour }),
    exitCode: exitCodeFor(results.valid),
    outDir,
  };
}
