// What checking a large run costs a user: for each shape of bench/checker-history.ts
// (few-keys, many-keys; both by default) a fenced-write run with its resource log is
// written to a temporary directory, then three commands are timed as whole
// processes (bench/measure.ts: wall time from start to exit, and peak RSS):
//   bare:   node bench/bare-loop.mjs DIR, which reads history.ndjson and
//           resource.ndjson and JSON.parses every line, and nothing else;
//   check:  the check alone, as a process of its own (cli/check-run.ts checkOnly:
//           the checker and results.json, without report.html);
//   full:   npm run check -- DIR, through npm, as users run it (the check, then
//           report.html).
// Rounds alternate the three, so a neighbour's burst on a shared machine lands
// on all alike; the best wall time of each counts, and the highest peak. The
// targets of issue 17: `npm run check` at most 1.0 times the bare loop on every
// shape, peak RSS under 1 GB; the report's cost is stated apart (full - check).
// Like bench:proxy it prints figures and exits 0 whether or not a target is met.
//
// `--lock rw` makes the generated runs an rw lock's instead (format 2, readers
// sharing keys and reading with their fences, writers alone), for the cost of the
// rw lock's analyses and model check; the mutex's runs are unchanged by it.
//
//   npm run bench:checker -- [--events N] [--shape few-keys|many-keys|both] [--lock mutex|rw] [--rounds R] [--report off] [--dir DIR] [--keep] [--json]
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BadInput, ROOT, commandOptions, entryArgs, repoFile, type OptionSpec } from "../lib/index.ts";
import { generateRun, SHAPES, type Shape } from "./checker-history.ts";
import { canMeasurePeak, measure, type Measure } from "./measure.ts";
import { benchCommand } from "./command.ts";

const COMMAND = "npm run bench:checker --";
const TARGET_RATIO = 1.0;
const TARGET_RSS_MB = 1024;

const USAGE = [
  `usage: ${COMMAND} [options]`,
  "",
  "Generates a large fenced-write run with its resource log per shape and times, as",
  "whole processes, a bare read-and-JSON.parse loop over both files, the check alone",
  "and `npm run check` (check and report.html) on it (targets: npm run check at most",
  "1.0 x the bare loop, peak RSS under 1 GB). Exit: 0 when the figures were printed,",
  "254 bad options, 255 failure.",
].join("\n");

const BENCH_OPTIONS: readonly OptionSpec[] = [
  { name: "events", kind: "int", default: 2_000_000, min: 1000, help: "history events to generate per shape" },
  { name: "shape", kind: "string", default: "both", choices: ["few-keys", "many-keys", "both"], help: "few-keys: 8 keys, 40 clients; many-keys: 2,000 keys, 200 clients" },
  { name: "lock", kind: "string", default: "mutex", choices: ["mutex", "rw"], help: "the generated runs' lock: rw makes an rw lock's run (80% of acquires read)" },
  { name: "rounds", kind: "int", default: 3, min: 1, max: 10, help: "times to run bare, check and full, alternating; the best of each counts" },
  { name: "report", kind: "on-off", default: true, help: "also time npm run check (the check and report.html)" },
  { name: "dir", kind: "string", default: undefined, defaultText: "a new temporary run per shape", help: "time this run directory instead of generating any" },
  { name: "seed", kind: "int", default: 1, min: 0, help: "seed of the generated runs" },
  { name: "keep", kind: "flag", default: false, help: "keep the generated runs (their directories are printed)" },
  { name: "json", kind: "flag", default: false, help: "print one JSON object per shape instead of the table" },
];

interface Options { events: number; shapes: Shape[]; lock: "mutex" | "rw"; rounds: number; report: boolean; dir?: string; seed: number; keep: boolean; json: boolean }

/** How each command is started: the bare loop and the check with node, the full path with npm. */
const commands = (dir: string) => ({
  bare: [process.execPath, [repoFile("bench/bare-loop.mjs"), dir]] as const,
  check: [process.execPath, [...entryArgs("bench/checker"), "--child-check", dir]] as const,
  full: ["npm", ["run", "check", "--", dir]] as const,
});
/** `npm run check` exits 1 for an invalid run and 2 for an unknown one: figures all the same. */
const VERDICT_CODES = [0, 1, 2];

interface Summary { wall_ms: number; max_rss_mb: number | null }

function summary(ms: Measure[]): Summary {
  const peaks = ms.map((m) => m.max_rss_mb).filter((x): x is number => x !== null);
  return { wall_ms: round(Math.min(...ms.map((m) => m.wall_ms))), max_rss_mb: peaks.length ? round(Math.max(...peaks)) : null };
}

/** Times one run directory; `about` describes it for the printout. */
async function timeRun(dir: string, o: Options, about: Record<string, unknown>): Promise<Record<string, unknown>> {
  const run = commands(dir);
  const taken: Record<"bare" | "check" | "full", Measure[]> = { bare: [], check: [], full: [] };
  for (let r = 0; r < o.rounds; r++) {
    taken.bare.push(await measure(...run.bare, ROOT));
    taken.check.push(await measure(...run.check, ROOT));
    if (o.report) taken.full.push(await measure(...run.full, ROOT, VERDICT_CODES));
  }
  const bare = summary(taken.bare);
  const check = summary(taken.check);
  const full = o.report ? summary(taken.full) : null;
  const ratio = (s: Summary): number => round(s.wall_ms / bare.wall_ms, 2);
  const met = (s: Summary) => ({ ratio: ratio(s) <= TARGET_RATIO, peak: s.max_rss_mb === null ? null : s.max_rss_mb < TARGET_RSS_MB });
  return {
    ...about,
    rounds: o.rounds,
    bare,
    check: { ...check, ratio: ratio(check), met: met(check) },
    full: full && { ...full, ratio: ratio(full), met: met(full), report_ms: round(full.wall_ms - check.wall_ms) },
    exit_code: taken.full[0]?.exit_code,
    targets: { ratio: TARGET_RATIO, max_rss_mb: TARGET_RSS_MB },
    taken,
  };
}

function print(f: Record<string, unknown>): void {
  const s = (x: unknown) => x as Summary & { ratio: number; met: { ratio: boolean; peak: boolean | null }; report_ms?: number };
  const bare = s(f.bare), check = s(f.check), full = f.full ? s(f.full) : null;
  const secs = (ms: number): string => `${(ms / 1000).toFixed(2)} s`.padStart(8);
  const peak = (x: Summary): string => (x.max_rss_mb === null ? "   ? MB" : `${Math.round(x.max_rss_mb)} MB`.padStart(7)) + " peak RSS";
  const verdict = (m: { ratio: boolean; peak: boolean | null }): string =>
    `ratio ${m.ratio ? "met" : "NOT MET"}, peak ${m.peak === null ? "unknown" : m.peak ? "met" : "NOT MET"}`;
  console.log(`  bare   ${secs(bare.wall_ms)}  ${peak(bare)}              node bench/bare-loop.mjs: read both files, JSON.parse every line`);
  console.log(`  check  ${secs(check.wall_ms)}  ${peak(check)}  ratio ${check.ratio.toFixed(2)}  the check alone: results.json, no report.html (${verdict(check.met)})`);
  if (full) {
    console.log(`  full   ${secs(full.wall_ms)}  ${peak(full)}  ratio ${full.ratio.toFixed(2)}  npm run check: results.json and report.html (${verdict(full.met)})`);
    console.log(`  report.html costs ${secs(full.report_ms!).trim()} on top of the check (full - check, npm's start included)`);
  }
}

async function bench(o: Options): Promise<void> {
  if (!o.json && !canMeasurePeak()) console.log("no /usr/bin/time here (Debian: apt-get install time): wall times only, peaks unknown");
  if (o.dir !== undefined) {
    const figures = await timeRun(o.dir, o, { dir: o.dir });
    if (o.json) console.log(JSON.stringify(figures));
    else {
      console.log(`${o.dir}, best of ${o.rounds} round${o.rounds === 1 ? "" : "s"}:`);
      print(figures);
    }
    return;
  }
  for (const shape of o.shapes) {
    const dir = mkdtempSync(join(tmpdir(), `bench-checker-${shape}-`));
    try {
      const lock = o.lock === "rw" ? ", an rw lock" : "";
      if (!o.json) process.stdout.write(`${shape} (${SHAPES[shape].keys} keys, ${SHAPES[shape].clients} clients${lock}): generating ${o.events} events in ${dir} ... `);
      const made = generateRun(dir, { events: o.events, seed: o.seed, ...SHAPES[shape], fencing: true, ...(o.lock === "rw" ? { lock: "rw" as const } : {}) });
      const mb = Math.round((made.historyBytes + made.resourceBytes) / (1 << 20));
      if (!o.json) console.log(`${made.events} events, ${made.decisions} decisions, ${mb} MB; best of ${o.rounds} round${o.rounds === 1 ? "" : "s"}:`);
      const figures = await timeRun(dir, o, { shape, lock: o.lock, ...made, dir });
      if (o.json) console.log(JSON.stringify(figures));
      else print(figures);
      if (o.keep && !o.json) console.log(`  run kept in ${dir}`);
    } finally {
      if (!o.keep) rmSync(dir, { recursive: true, force: true });
    }
  }
}

const round = (x: number, places = 1): number => Number(x.toFixed(places));

function parse(argv: string[]): Options | null {
  const options = commandOptions(argv, BENCH_OPTIONS, USAGE);
  if (!options) return null;
  const shape = options.shape as Shape | "both";
  const o: Options = {
    events: options.events as number, shapes: shape === "both" ? ["few-keys", "many-keys"] : [shape], lock: options.lock as "mutex" | "rw", rounds: options.rounds as number,
    report: options.report as boolean, dir: options.dir as string | undefined, seed: options.seed as number, keep: options.keep as boolean, json: options.json as boolean,
  };
  // A run to time must be a run: a missing one is the user's mistake, not a failure of a child.
  if (o.dir !== undefined && !existsSync(join(o.dir, "history.ndjson"))) throw new BadInput(`--dir ${o.dir}: no history.ndjson there (a run directory to time; leave --dir out to generate one)`);
  return o;
}

// The check alone, for `check` above: what `npm run check` does but report.html.
if (process.argv[2] === "--child-check") await (await import("../cli/check-run.ts")).checkOnly(process.argv[3]);
else benchCommand("bench:checker", parse, bench);
