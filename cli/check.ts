// `npm run check -- <run directory>`: checks a stored run again, rewrites its
// results.json and report.html, prints the summary, and exits with HISTORY.md's
// code. `checkAndReport` is the same path the runner takes after a fresh run, so a
// stored run and a fresh one get the same verdict.
import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { analyze, loadRun, writeResults } from "../checker/index.ts";
import { BadInput, EXIT, exitCodeFor } from "../lib/index.ts";
import { renderSummary, writeReport } from "../reports/index.ts";
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
 * Checks the run in `runDir` and writes results.json then report.html. Throws
 * BadInput, before writing anything, when the directory or its files are unusable.
 */
export async function checkAndReport(runDir: string): Promise<CheckOutcome> {
  const run = await loadRun(runDir);
  const { results, warnings } = analyze(run);
  await writeResults(runDir, results);
  await writeReport(runDir, { header: run.header, events: run.events, decisions: run.decisions, results });
  return {
    results,
    warnings: [...run.warnings, ...warnings],
    summary: renderSummary({ header: run.header, results }),
    exitCode: exitCodeFor(results.valid),
  };
}

const USAGE = `usage: npm run check -- <run directory>
  Checks a stored run (e.g. histories/latest) again, rewrites its results.json and
  report.html and prints the verdict. Exit 0 valid, 1 invalid, 2 unknown,
  254 bad input, 255 internal error.`;

export async function main(args: string[]): Promise<number> {
  if (args.length === 1 && (args[0] === "-h" || args[0] === "--help")) {
    console.log(USAGE);
    return EXIT.valid;
  }
  if (args.length !== 1 || args[0].startsWith("-")) {
    console.error(args.length === 0 ? "check: no run directory given" : `check: expected one run directory, got ${args.map((a) => JSON.stringify(a)).join(" ")}`);
    console.error(USAGE);
    return EXIT.badInput;
  }
  try {
    const out = await checkAndReport(args[0]);
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
