// npm run fuzz:checker -- [--runs N] [--seed S] [--against reference|fast] [--keep on|off] [--case I] [--first] [--types T,...]
//
// Runs N generated cases through the fast checker and the reference checker and
// compares their verdicts (property.ts). Prints how fast it went, the coverage of
// what it made (coverage.ts), and each disagreement: the case number, its seed and
// the shrunk case's path, with the shrunk run directory kept under
// test/checker/fuzz-found/ (keep.ts). The case number of the first disagreement is
// what the mutation runs read: with a known defect put back into the fast checker,
// it says within how many cases the fuzz finds it (--first stops there; --types
// counts only disagreements about the anomaly types the defect is in, so that one
// the checkers already had does not stand in for it).
//
// Case I of seed S is the first case of fast-check's run with the seed caseSeed(S,
// I), so `--seed S --case I` replays it alone, shrinking included, whatever came
// before it. --against fast puts the fast checker on both sides: it measures the
// fuzz itself (speed, coverage) and must always agree.
//
// Exit: 0 no disagreement, 1 some, 254 bad options, 255 the fuzz itself failed.
import fc from "fast-check";
import { BadInput, EXIT, helpText, noPositional, parseArgs, type OptionSpec } from "../../../lib/index.ts";
import { ANOMALY_TYPES, LIVENESS_TYPES } from "../../../store/events.ts";
import { CHECKERS, type Checker } from "./checkers.ts";
import { Coverage } from "./coverage.ts";
import { keepCase } from "./keep.ts";
import { planArb } from "./plan.ts";
import { agreement, outcomeLine, runCase, type CaseResult } from "./property.ts";

const COMMAND = "npm run fuzz:checker --";
const USAGE = [
  `usage: ${COMMAND} [--runs N] [--seed S] [--against reference|fast] [--keep on|off] [--case I] [--first] [--types T,...]`,
  "",
  "Generates runs of a lock and a resource under faults (test/checker/fuzz/) and",
  "checks each with the fast checker and the reference checker: their valid,",
  "anomaly types and counts must be the same. Prints cases per second, the",
  "coverage of what was generated and every disagreement, shrunk and kept under",
  "test/checker/fuzz-found/. Exit: 0 all agreed, 1 a disagreement, 254 bad options.",
].join("\n");

const OPTIONS: readonly OptionSpec[] = [
  { name: "runs", kind: "int", default: 1000, min: 1, help: "cases to generate and check" },
  { name: "seed", kind: "int", default: undefined, min: 0, max: 2 ** 31 - 1, defaultText: "random, printed", help: "seed of the whole session" },
  { name: "against", kind: "string", default: "reference", choices: ["reference", "fast"], help: "the checker the fast one is compared with (fast: the fuzz against itself)" },
  { name: "keep", kind: "on-off", default: true, help: "keep each shrunk disagreement under test/checker/fuzz-found/" },
  { name: "case", kind: "int", default: undefined, min: 0, help: "run only case I of the seed (a replay of a reported case)" },
  { name: "first", kind: "flag", default: undefined, help: "stop at the first disagreement (its case number is what a mutation run wants)" },
  {
    name: "types", kind: "list", default: undefined, choices: [...ANOMALY_TYPES, ...LIVENESS_TYPES, "valid"],
    help: "count only disagreements in which one of these anomaly types is found or counted differently (valid: the verdicts differ with no type in it); the others are listed as set aside",
  },
];

/** Whether a disagreement (its signature, compare.ts) is one of those asked about. */
function asked(signature: string, types: string[] | undefined): boolean {
  if (!types || signature.startsWith("threw")) return true;
  if (signature.startsWith("valid")) return types.includes("valid");
  return signature.replace(/^types /, "").split(",").some((t) => types.includes(t));
}

/** The seed of case `i` of session seed `seed`: a 31-bit mix, so that cases of neighbouring seeds are unrelated. */
export function caseSeed(seed: number, i: number): number {
  let h = (seed ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 1;
}

/** Case `i`'s Plan: the first value of fast-check's run with its seed. */
const planOf = (seed: number, i: number) => fc.sample(planArb, { seed: caseSeed(seed, i), numRuns: 1 })[0];

/**
 * Shrinks the disagreement of case `i` (fast-check replays the case from its seed
 * and shrinks it) to smaller cases that disagree the same way; null when it does
 * not fail again.
 */
async function shrink(seed: number, i: number, other: Checker, signature: string): Promise<{ result: CaseResult; path: string; shrinks: number } | null> {
  const details = await fc.check(agreement(other, undefined, signature), { seed: caseSeed(seed, i), numRuns: 1, interruptAfterTimeLimit: 120_000, markInterruptAsFailure: false });
  if (!details.failed || !details.counterexample) return null;
  const result = await runCase(details.counterexample[0], other);
  return { result, path: details.counterexamplePath ?? "", shrinks: details.numShrinks };
}

async function main(argv: string[]): Promise<number> {
  const { options, positional, help } = parseArgs(argv, OPTIONS);
  if (help) {
    process.stdout.write(helpText(USAGE, OPTIONS));
    return EXIT.valid;
  }
  noPositional(positional);
  const seed = (options.seed as number | undefined) ?? Math.floor(Math.random() * 2 ** 31);
  const against = options.against as keyof typeof CHECKERS;
  const other = CHECKERS[against];
  const only = options.case as number | undefined;
  const types = options.types as string[] | undefined;
  let setAside = 0;
  const cases = only === undefined ? Array.from({ length: options.runs as number }, (_, i) => i) : [only];
  const log = (s: string): void => void process.stdout.write(s + "\n");

  log(`fuzz:checker: ${only === undefined ? `${cases.length} cases` : `case ${only}`}, seed ${seed}, the fast checker against the ${against} checker`);
  const coverage = new Coverage();
  const disagreements: number[] = [];
  let orderDiffers = 0;
  let checking = 0;
  let lastReport = performance.now();
  for (const i of cases) {
    const started = performance.now();
    const r = await runCase(planOf(seed, i), other, `case-${i}`);
    checking += performance.now() - started;
    coverage.add(r);
    if (r.comparison.orderDiffers) {
      if (orderDiffers++ === 0) log(`case ${i}: same anomaly types in another order: fast [${"error" in r.fast ? "" : r.fast.anomaly_types.join(", ")}], ${against} [${"error" in r.other ? "" : r.other.anomaly_types.join(", ")}] (not a disagreement; counted below)`);
    }
    if (r.comparison.differences.length > 0 && !asked(r.comparison.signature, types)) {
      if (setAside++ < 5) log(`case ${i}: a disagreement not about ${types!.join(", ")} set aside (${r.comparison.signature})`);
    } else if (r.comparison.differences.length > 0) {
      disagreements.push(i);
      log("");
      log(`DISAGREEMENT at case ${i} (seed ${seed}, case seed ${caseSeed(seed, i)})`);
      log(`  fast:       ${outcomeLine(r.fast)}`);
      log(`  ${`${against}:`.padEnd(11)} ${outcomeLine(r.other)}`);
      for (const d of r.comparison.differences) log(`  - ${d}`);
      const replay = `${COMMAND} --seed ${seed} --case ${i}${against === "reference" ? "" : ` --against ${against}`}`;
      const shrunk = await shrink(seed, i, other, r.comparison.signature);
      if (!shrunk) log(`  (shrinking found it agreeing when replayed: a checker that is not deterministic?)`);
      else {
        log(`  shrunk (${shrunk.shrinks} shrinks, path ${shrunk.path || "-"}): fast ${outcomeLine(shrunk.result.fast)}; ${against} ${outcomeLine(shrunk.result.other)}`);
        for (const d of shrunk.result.comparison.differences) log(`    - ${d}`);
        if (options.keep) log(`  kept: ${keepCase(shrunk.result, { by: COMMAND, seed: caseSeed(seed, i), path: shrunk.path, caseNumber: i, replay })}`);
      }
      log(`  replay: ${replay}`);
      log("");
      if (options.first) break;
    }
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      log(`  ... ${coverage.cases} cases, ${disagreements.length} disagreements, ${(coverage.cases / (checking / 1000)).toFixed(0)} cases/s`);
    }
  }
  const rate = coverage.cases / (checking / 1000);
  log("");
  log(coverage.table());
  log("");
  log(`${coverage.cases} cases in ${(checking / 1000).toFixed(1)} s of checking: ${rate.toFixed(1)} cases per second (generating, writing, both checks, removing; shrinking not counted)`);
  log(`order differences (same types, another order): ${orderDiffers}`);
  if (types) log(`disagreements set aside (not about ${types.join(", ")}): ${setAside}`);
  if (disagreements.length === 0) {
    log(`no disagreement in ${coverage.cases} cases (seed ${seed})`);
    return EXIT.valid;
  }
  log(`${disagreements.length} disagreements, at cases ${disagreements.slice(0, 20).join(", ")}${disagreements.length > 20 ? ", ..." : ""}`);
  log(`first disagreement at case ${disagreements[0]} (seed ${seed})`);
  return EXIT.invalid;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof BadInput) {
    process.stderr.write(`fuzz:checker: ${err.message}\n`);
    process.exitCode = EXIT.badInput;
  } else {
    process.stderr.write(`fuzz:checker failed: ${(err as Error).stack ?? err}\n`);
    process.exitCode = EXIT.crash;
  }
}
