// `npm run check -- [--model strict] <run directory>`: checks a stored run again,
// rewrites its results.json and report.html, prints the summary, and exits with
// HISTORY.md's code. `checkAndReport` is the same path the runner takes after a
// fresh run, so a stored run and a fresh one get the same verdict.
import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { checkRun, checkRunKeeping, MODELS, writeResults, type CheckOptions } from "../checker/index.ts";
import { BadInput, EXIT, exitCodeFor, helpText, parseArgs, type OptionSpec } from "../lib/index.ts";
import { REPORT_CHECKPOINT_EVERY, renderSummary, reportRun } from "../reports/index.ts";
import type { Results } from "../store/events.ts";

export interface CheckOutcome {
  results: Results;
  /** For stderr: skipped lines, reasons the verdict is unknown. */
  warnings: string[];
  /** The few lines to print. */
  summary: string;
  exitCode: number;
}

/**
 * The check alone: reads the run in one streaming pass (checker/run.ts) and writes
 * results.json. Throws BadInput, before writing anything, when the directory or
 * its files are unusable. Options left out come from the run's run.json.
 */
export async function checkOnly(runDir: string, options: CheckOptions = {}): Promise<{ results: Results; warnings: string[] }> {
  const checked = await checkRun(runDir, options);
  await writeResults(runDir, checked.results);
  return checked;
}

/**
 * Checks the run in `runDir` and writes results.json, then report.html. A large
 * run's report is drawn from what the check's pass kept (its model, the nemesis
 * events, checkpoints into the files) plus the few stretches of the files it
 * draws in full, so the history is read once and never held in memory
 * (reports/index.ts reportRun).
 */
export async function checkAndReport(runDir: string, options: CheckOptions = {}): Promise<CheckOutcome> {
  const { results, warnings, run } = await checkRunKeeping(runDir, options, REPORT_CHECKPOINT_EVERY);
  await writeResults(runDir, results);
  const { header } = await reportRun(runDir, results, { checked: run });
  return {
    results,
    warnings,
    summary: renderSummary({ header, results }),
    exitCode: exitCodeFor(results.valid),
  };
}

const USAGE = `usage: npm run check -- [options] <run directory>
  Checks a stored run (e.g. histories/latest) again, rewrites its results.json and
  report.html and prints the verdict. Exit 0 valid, 1 invalid, 2 unknown,
  254 bad input, 255 internal error.`;

const CHECK_OPTIONS: readonly OptionSpec[] = [
  { name: "model", kind: "string", default: undefined, choices: MODELS, defaultText: "as the run was made (run.json), else lease", help: "strict: the model check's strict-mutex-violation makes the run invalid" },
  { name: "model-budget", kind: "int", default: undefined, min: 1, defaultText: "10000", help: "ms the model check may take in all before it says unknown" },
];

export async function main(args: string[]): Promise<number> {
  let runDir: string;
  let options: CheckOptions;
  try {
    const { options: o, positional, help } = parseArgs(args, CHECK_OPTIONS);
    if (help) {
      console.log(helpText(USAGE, CHECK_OPTIONS));
      return EXIT.valid;
    }
    if (positional.length !== 1) {
      throw new BadInput(positional.length === 0 ? "no run directory given" : `expected one run directory, got ${positional.map((a) => JSON.stringify(a)).join(" ")}`);
    }
    runDir = positional[0];
    options = { model: o.model as CheckOptions["model"], modelBudgetMs: o["model-budget"] as number | undefined };
  } catch (err) {
    if (!(err instanceof BadInput)) throw err;
    console.error(`check: ${err.message}`);
    console.error(USAGE);
    return EXIT.badInput;
  }
  try {
    const out = await checkAndReport(runDir, options);
    for (const w of out.warnings) console.error(`warning: ${w}`);
    console.log(out.summary);
    return out.exitCode;
  } catch (err) {
    if (err instanceof BadInput) {
      console.error(`check: ${err.message}`);
      return EXIT.badInput;
    }
    console.error("check: internal error:", err);
    return EXIT.crash;
  }
}

function isEntry(): boolean {
  try {
    return process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
}

if (isEntry()) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error("check: internal error:", err);
      process.exitCode = EXIT.crash;
    },
  );
}
