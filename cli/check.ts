// `npm run check -- [--model strict] <run directory>`: checks a stored run again,
// rewrites its results.json and report.html, prints the summary, and exits with
// HISTORY.md's code. It takes the path the runner takes after a fresh run
// (check-run.ts), so a stored run and a fresh one get the same
// verdict.
import { MODELS, type CheckOptions } from "../checker/index.ts";
import { BadInput, EXIT, helpText, parseArgs, type OptionSpec } from "../lib/index.ts";
import { checkAndReport } from "./check-run.ts";

const USAGE = `usage: npm run check -- [options] <run directory>
  Checks a stored run (e.g. histories/latest) again, rewrites its results.json and
  report.html and prints the verdict. Exit 0 valid, 1 invalid, 2 unknown,
  254 bad input, 255 internal error.`;

const CHECK_OPTIONS: readonly OptionSpec[] = [
  { name: "model", kind: "string", default: undefined, choices: MODELS, defaultText: "as the run was made (run.json), else lease", help: "strict: the model check's strict-mutex-violation makes the run invalid" },
  { name: "model-budget", kind: "int", default: undefined, min: 1, defaultText: "10000", help: "ms the model check may take in all before it says unknown" },
];

async function main(args: string[]): Promise<number> {
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

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error("check: internal error:", err);
    process.exitCode = EXIT.crash;
  },
);
