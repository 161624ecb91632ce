// `fencecheck check [options] <run directory>` (in the checkout also `npm run
// check --`): checks a stored run again, prints the summary, and exits with
// the code docs/history-format.md gives it. It takes the path the runner takes
// after a fresh run (check-run.ts), so a stored run and a fresh one get the same
// verdict.
//
// A run someone hands you is evidence: with --out DIR, results.json and
// report.html go to DIR and the run is left as it was. Without it they are
// rewritten in the run, as the runner wrote them, and the command says so.
import { resolve } from "node:path";
import { LIVENESS, MODELS, type CheckOptions } from "../checker/index.ts";
import { BadInput, EXIT, helpText, parseArgs, type OptionSpec } from "../lib/index.ts";
import { checkAndReport } from "./check-run.ts";

const USAGE = `Usage: fencecheck check [options] <run directory>

Checks a stored run (e.g. histories/latest) again and prints the verdict. Writes
results.json and report.html into --out DIR, leaving the run untouched; without
--out, rewrites them in the run directory. --reference checks it with the
reference checker instead and writes results.json only.
Exit: 0 valid, 1 invalid, 2 unknown, 254 bad input, 255 internal error.`;

export const CHECK_OPTIONS: readonly OptionSpec[] = [
  { name: "out", kind: "string", default: undefined, defaultText: "the run directory", help: "write results.json and report.html here (made if missing) and leave the run untouched" },
  { name: "model", kind: "string", default: undefined, choices: MODELS, defaultText: "as the run was made (run.json), else lease", help: "strict: the model check's strict-mutex-violation makes the run invalid" },
  { name: "liveness", kind: "string", default: undefined, choices: LIVENESS, defaultText: "as the run was made (run.json), else lenient", help: "strict: a stuck-lock finding (format 2 runs) makes the run invalid" },
  { name: "model-budget", kind: "int", default: undefined, min: 1, defaultText: "10000", help: "ms the model check may take in all before it says unknown" },
  {
    name: "reference",
    kind: "flag",
    default: false,
    help: "check with the reference checker instead (checker/reference/, written from the docs alone; docs/reference-checker.md): writes results.json only, no report.html; has no model check, so not with --model strict or --model-budget",
  },
];

export async function main(args: string[]): Promise<number> {
  const { options: o, positional, help } = parseArgs(args, CHECK_OPTIONS);
  if (help) {
    process.stdout.write(helpText(USAGE, CHECK_OPTIONS));
    return EXIT.valid;
  }
  if (positional.length !== 1)
    throw new BadInput(positional.length === 0 ? "no run directory given (fencecheck check --help)" : `expected one run directory, got ${positional.map((a) => JSON.stringify(a)).join(" ")}`);
  const runDir = positional[0];
  if (o.reference) {
    if (o.model === "strict") throw new BadInput("--reference has no model check, so it cannot judge --model strict");
    if (o["model-budget"] !== undefined) throw new BadInput("--model-budget has no meaning with --reference (the reference checker has no model check)");
    const out = o.out as string | undefined;
    const { checkWithReference } = await import("./check-reference.ts");
    return checkWithReference(runDir, { out, liveness: o.liveness as "lenient" | "strict" | undefined, intoRun: out === undefined || resolve(out) === resolve(runDir) });
  }
  const options: CheckOptions = { model: o.model as CheckOptions["model"], liveness: o.liveness as CheckOptions["liveness"], modelBudgetMs: o["model-budget"] as number | undefined };
  const out = o.out as string | undefined;
  const intoRun = out === undefined || resolve(out) === resolve(runDir);
  const checked = await checkAndReport(runDir, options, out ?? runDir);
  for (const w of checked.warnings) process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(`${checked.summary}\n`);
  process.stdout.write(
    intoRun
      ? `Wrote results.json and report.html into the run, ${runDir} (--out DIR leaves a run untouched)\n`
      : `Wrote results.json and report.html into ${out}; the run ${runDir} is untouched\n`,
  );
  return checked.exitCode;
}
