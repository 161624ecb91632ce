// A disagreement, kept: the smallest failing case fast-check shrank to, written as
// a run directory under test/checker/fuzz-found/<short-name>/, with why.txt (the two
// verdicts, what differs, how it was found and how to replay it) and fuzz.json (the
// Plan, and the liveness the checkers were given). agree.test.ts checks every
// folder there with both checkers, so a disagreement once found is checked on
// every npm test until both checkers give one verdict on it.
import { createHash } from "node:crypto";
import { ANOMALY_TYPES, LIVENESS_TYPES } from "../../../store/events.ts";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CheckOptions } from "./checkers.ts";
import { execute } from "./execute.ts";
import { describePlan, type Plan } from "./plan.ts";
import { outcomeLine, type CaseResult } from "./property.ts";
import { runFiles, writeRunDir } from "./run-dir.ts";

export const FOUND_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "fuzz-found");

export interface HowFound {
  /** Who found it: `npm run fuzz:checker` or the test. */
  by: string;
  seed: number;
  /** fast-check's path to the shrunk case (replays it with the seed). */
  path: string;
  /** The case number of the run that first failed, when the command found it. */
  caseNumber?: number;
  /** The command that replays it. */
  replay: string;
}

/** A name that says what differs (the first anomaly type named, else the verdict) and tells two kept cases apart. */
function shortName(r: CaseResult, history: string): string {
  const text = r.comparison.differences.join(" ");
  const type = [...ANOMALY_TYPES, ...LIVENESS_TYPES, "strict-mutex-violation", "strict-rw-violation", "strict-semaphore-violation"]
    .map((t) => ({ t, at: text.indexOf(`${t}`) }))
    .filter((x) => x.at >= 0)
    .sort((a, b) => a.at - b.at)[0]?.t;
  const what = type ?? (/threw/.test(text) ? "threw" : "verdict");
  const slug = what.replace(/[^a-z0-9]+/g, "-").slice(0, 40);
  return `${slug}-${createHash("sha256").update(history).digest("hex").slice(0, 8)}`;
}

/** Writes the case into FOUND_DIR (or `root`); returns its folder. The same run kept twice is one folder. */
export function keepCase(r: CaseResult, how: HowFound, root = FOUND_DIR): string {
  const plan = r.plan;
  const files = runFiles(plan, execute(plan, "kept"), "kept");
  const dir = join(root, shortName(r, files.history));
  writeRunDir(dir, files);
  const why = [
    `The fast checker (checker/run.ts) and the reference checker (checker/reference/) disagree on this run.`,
    ``,
    `fast checker:      ${outcomeLine(r.fast)}`,
    `reference checker: ${outcomeLine(r.other)}`,
    ``,
    `What differs:`,
    ...r.comparison.differences.map((d) => `  - ${d}`),
    ``,
    `Checked with liveness ${plan.liveness} (fuzz.json; run.json ${plan.runJson === "none" ? "absent" : "says the same"}).`,
    `The case: ${describePlan(plan)}.`,
    ``,
    `Found by ${how.by}${how.caseNumber !== undefined ? ` at case ${how.caseNumber}` : ""}, seed ${how.seed}, shrunk along path ${how.path || "(none)"}.`,
    `Replay: ${how.replay}`,
    ``,
  ].join("\n");
  writeFileSync(join(dir, "why.txt"), why);
  const check: CheckOptions = { liveness: plan.liveness };
  writeFileSync(join(dir, "fuzz.json"), JSON.stringify({ check, plan, found: how }, null, 2) + "\n");
  return dir;
}

export interface KeptCase {
  name: string;
  dir: string;
  check: CheckOptions;
}

/** Every kept case: the folders of FOUND_DIR (or `root`) that hold a history. */
export function keptCases(root = FOUND_DIR): KeptCase[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(root, e.name, "history.ndjson")))
    .map((e) => {
      const dir = join(root, e.name);
      let check: CheckOptions = { liveness: "lenient" };
      const meta = join(dir, "fuzz.json");
      if (existsSync(meta)) check = (JSON.parse(readFileSync(meta, "utf8")) as { check: CheckOptions }).check;
      return { name: e.name, dir, check };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** What a Plan kept in fuzz.json was: to replay a kept case through the generator. */
export function keptPlan(dir: string): Plan | null {
  const meta = join(dir, "fuzz.json");
  return existsSync(meta) ? (JSON.parse(readFileSync(meta, "utf8")) as { plan: Plan }).plan : null;
}
