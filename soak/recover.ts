// `npm run soak -- --summarize DIR`: the summary of a soak that was killed before
// it could write one. Its plan says which runs were meant to happen, runs.ndjson
// which finished; the run it was in when killed left a run directory with a
// history but no verdict (its seed, in run.json, says which planned run it was),
// and that history is checked now by `npm run check`, as any stored run can be.
// Whatever has neither record nor directory never started.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { RUN_FILES } from "../store/events.ts";
import { finishSoak } from "./finish.ts";
import { readPlan, readRecords, SOAK_FILES, type PlannedRun, type RunRecord } from "./records.ts";
import { figuresOf, readResults, spawnCommand } from "./run-one.ts";
import type { SoakSummary } from "./summary.ts";

export async function summarizeSoak(soakDir: string, opts: { compare: string | null; keepRuns: number | null; log: (line: string) => void }): Promise<SoakSummary> {
  const plan = readPlan(soakDir);
  const { records, warnings } = readRecords(soakDir);
  for (const w of warnings) opts.log(`warning: ${w}`);
  const { notRun } = await recoverRuns(plan.runs, records, { from: soakDir, into: soakDir, place: (dir) => dir, log: opts.log });
  return finishSoak({
    soakDir,
    // <store>/soaks/<time>/
    store: dirname(dirname(soakDir)),
    plan,
    records,
    notRun,
    wallS: records.reduce((s, r) => s + r.wall_s, 0),
    interrupted: false,
    compare: opts.compare,
    keepRuns: opts.keepRuns,
  });
}

/**
 * The planned runs of a soak directory (`from`) that have no record: the history
 * each left is checked where `place` puts its run directory, inside the soak
 * directory `into` (the same directory for --summarize; the merged soak for
 * --merge, so that the shard's directory is only read), and its record added to
 * `records`; a run that left no history never started.
 */
export async function recoverRuns(
  planned: readonly PlannedRun[],
  records: RunRecord[],
  o: { from: string; into: string; place: (runDir: string, p: PlannedRun) => string; log: (line: string) => void },
): Promise<{ records: RunRecord[]; notRun: Array<PlannedRun & { reason: string }> }> {
  const done = new Set(records.map((r) => `${r.config}#${r.index}`));
  const notRun: Array<PlannedRun & { reason: string }> = [];
  for (const p of planned) {
    if (done.has(`${p.config}#${p.index}`)) continue;
    const left = findRunDir(o.from, p);
    if (!left) {
      notRun.push({ ...p, reason: "the soak stopped before this run started" });
      continue;
    }
    o.log(`${p.config} #${p.index}: the soak stopped during this run; checking the history it left in ${relative(o.from, left)}`);
    records.push(await checkLeftRun(o.into, p, o.place(left, p)));
  }
  return { records, notRun };
}

/** The run directory a planned run made, found by its seed under runs/<configuration>/. */
function findRunDir(soakDir: string, p: PlannedRun): string | null {
  const root = join(soakDir, SOAK_FILES.runs, p.config);
  for (const test of subdirs(root))
    for (const stamp of subdirs(join(root, test))) {
      const dir = join(root, test, stamp);
      try {
        const info = JSON.parse(readFileSync(join(dir, RUN_FILES.run), "utf8")) as { seed?: unknown };
        if (info.seed === p.seed && existsSync(join(dir, RUN_FILES.history))) return dir;
      } catch {
        // run.json not written yet: the run had not started its history either
      }
    }
  return null;
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
}

async function checkLeftRun(soakDir: string, p: PlannedRun, runDir: string): Promise<RunRecord> {
  const output = join(soakDir, SOAK_FILES.output, `${p.config}-${p.index}.log`);
  const started = Date.now();
  const child = spawnCommand("check", [runDir], output);
  const code = await new Promise<number | null>((resolve) => {
    child.once("error", () => resolve(null));
    child.once("close", (c) => resolve(c));
  });
  const base: RunRecord = {
    config: p.config,
    index: p.index,
    seed: p.seed,
    status: "interrupted",
    exit_code: code,
    run_dir: relative(soakDir, runDir),
    output: relative(soakDir, output),
    wall_s: Math.round((Date.now() - started) / 100) / 10,
    anomaly_types: [],
    anomaly_counts: {},
    acquire_ms: null,
    faults: {},
    argv: p.argv,
    incomplete: true,
  };
  const status = code === 0 ? "valid" : code === 1 ? "invalid" : code === 2 ? "unknown" : null;
  const results = status ? readResults(runDir) : null;
  if (!status || !results) return { ...base, error: `the history it left could not be checked (fencecheck check exited ${code}; see ${base.output})` };
  return { ...base, status, ...figuresOf(results) };
}
