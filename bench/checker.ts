// What checking a large run costs: a two-million-event fenced-write run with its
// resource log (bench/checker-history.ts) is written to a temporary directory, then
// timed in child processes, each started afresh so none inherits another's heap:
//   bare:   read history.ndjson and resource.ndjson and JSON.parse every line;
//   check:  `npm run check`'s check (cli/check.ts checkOnly): the streaming
//           checker and results.json, without report.html;
//   full:   what `npm run check` does (cli/check.ts checkAndReport): the check,
//           then report.html (downsampled past 20k events: drawn from what the
//           check's pass kept, plus the stretches of the files drawn in full).
// The targets of issue 6: at most 1.5 times the bare loop, under 1 GB; both the
// check and the full path are held to them, since a user runs the full path.
// Each child reports its wall time, its CPU time (all threads, so a busy shared
// machine shows less in it than in wall time) and its peak RSS. Like bench:proxy
// it prints figures and exits 0 whether or not a target is met.
//
//   npm run bench:checker -- [--events N] [--rounds R] [--report off] [--dir DIR] [--keep] [--json]
import { execFile } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BadInput, EXIT, ROOT, commandOptions, entryArgs, type OptionSpec } from "../lib/index.ts";
import { generateRun } from "./checker-history.ts";

const COMMAND = "npm run bench:checker --";
const TARGET_RATIO = 1.5;
const TARGET_RSS_MB = 1024;

const USAGE = [
  `usage: ${COMMAND} [options]`,
  "",
  "Generates a large fenced-write run with its resource log and times a bare",
  "read-and-JSON.parse loop over both files against the checker on the same run",
  "and against the full `npm run check` (check and report.html) (targets: at most",
  "1.5 x the bare loop, peak RSS under 1 GB). Exit: 0 when the figures were",
  "printed, 254 bad options, 255 failure.",
].join("\n");

const BENCH_OPTIONS: readonly OptionSpec[] = [
  { name: "events", kind: "int", default: 2_000_000, min: 1000, help: "history events to generate" },
  { name: "rounds", kind: "int", default: 2, min: 1, max: 10, help: "times to run bare, check and full, alternating; the best of each counts" },
  { name: "report", kind: "on-off", default: true, help: "also time the full path, check and report.html (what npm run check does)" },
  { name: "dir", kind: "string", default: undefined, defaultText: "a new temporary run", help: "time this run directory instead of generating one" },
  { name: "seed", kind: "int", default: 1, min: 0, help: "seed of the generated run" },
  { name: "keep", kind: "flag", default: false, help: "keep the generated run (its directory is printed)" },
  { name: "json", kind: "flag", default: false, help: "print one JSON object instead of the table" },
];

interface Measure {
  wall_ms: number;
  cpu_ms: number;
  max_rss_mb: number;
  detail?: unknown;
}

// ---- children --------------------------------------------------------------

async function child(kind: string, dir: string): Promise<Measure> {
  // Modules are loaded (and compiled by tsx) before the clock starts: the figures are of the work.
  const { checkAndReport, checkOnly } = await import("../cli/check-run.ts");
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let detail: unknown;
  if (kind === "bare") detail = bareLoop(dir);
  else if (kind === "check") {
    const { results } = await checkOnly(dir);
    detail = { valid: results.valid, anomaly_types: results.anomaly_types, model: results.stats.model };
  } else {
    const { results } = await checkAndReport(dir);
    detail = { valid: results.valid, report_mb: round(statSync(join(dir, "report.html")).size / (1 << 20), 2) };
  }
  const cpu = process.cpuUsage(c0);
  return { wall_ms: performance.now() - t0, cpu_ms: (cpu.user + cpu.system) / 1000, max_rss_mb: process.resourceUsage().maxRSS / 1024, detail };
}

/** The floor: both files read in large chunks, cut into lines, every line parsed. */
function bareLoop(dir: string): number {
  let lines = 0;
  const buf = Buffer.allocUnsafe(8 << 20);
  for (const file of ["history.ndjson", "resource.ndjson"]) {
    const fd = openSync(join(dir, file), "r");
    let carry = "";
    for (;;) {
      const bytes = readSync(fd, buf, 0, buf.length, null);
      if (bytes === 0) break;
      const text = carry + buf.toString("utf8", 0, bytes);
      let start = 0;
      for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
        JSON.parse(text.slice(start, nl));
        lines++;
        start = nl + 1;
      }
      carry = text.slice(start);
    }
    closeSync(fd);
  }
  return lines;
}

function runChild(kind: string, dir: string): Promise<Measure> {
  return new Promise((done, fail) => {
    execFile(process.execPath, [...entryArgs("bench/checker"), "--child", kind, dir],
      { cwd: ROOT, maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
        if (err) return fail(new Error(`the ${kind} child failed: ${stderr.trim() || err.message}`));
        done(JSON.parse(stdout.trim().split("\n").pop()!) as Measure);
      });
  });
}

// ---- parent ----------------------------------------------------------------

async function bench(o: { events: number; rounds: number; report: boolean; dir?: string; seed: number; keep: boolean; json: boolean }): Promise<void> {
  const generated = o.dir === undefined;
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), "bench-checker-"));
  try {
    let made: ReturnType<typeof generateRun> | null = null;
    if (generated) {
      if (!o.json) process.stdout.write(`generating ${o.events} events in ${dir} ... `);
      made = generateRun(dir, { events: o.events, seed: o.seed, keys: 8, clients: 40, workers: 4, fencing: true });
      if (!o.json) process.stdout.write(`${made.events} events, ${made.decisions} decisions, ${mb(made.historyBytes + made.resourceBytes)} MB\n`);
    }
    const bare: Measure[] = [];
    const check: Measure[] = [];
    const full: Measure[] = [];
    // Alternating, so a neighbour's burst on a shared machine lands on all alike.
    for (let r = 0; r < o.rounds; r++) {
      bare.push(await runChild("bare", dir));
      check.push(await runChild("check", dir));
      if (o.report) full.push(await runChild("full", dir));
    }
    const best = (ms: Measure[], k: "wall_ms" | "cpu_ms"): number => Math.min(...ms.map((m) => m[k]));
    const summary = (ms: Measure[]) => ({ wall_ms: round(best(ms, "wall_ms")), cpu_ms: round(best(ms, "cpu_ms")), max_rss_mb: round(Math.max(...ms.map((m) => m.max_rss_mb))) });
    const ratio = (ms: Measure[]) => ({ wall: round(best(ms, "wall_ms") / best(bare, "wall_ms"), 2), cpu: round(best(ms, "cpu_ms") / best(bare, "cpu_ms"), 2) });
    const figures = {
      run: { dir, generated, ...(made ?? {}) },
      bare: summary(bare),
      check: { ...summary(check), verdict: check[0].detail },
      ratio: ratio(check),
      full: full.length ? { ...summary(full), report_mb: (full[0].detail as { report_mb: number }).report_mb, ratio: ratio(full) } : null,
      rounds: { bare, check, full },
      targets: { ratio: TARGET_RATIO, max_rss_mb: TARGET_RSS_MB },
    };
    if (o.json) {
      console.log(JSON.stringify(figures));
      return;
    }
    const line = (name: string, m: { wall_ms: number; cpu_ms: number; max_rss_mb: number }): string =>
      `  ${name.padEnd(8)} ${ms(m.wall_ms).padStart(10)} wall ${ms(m.cpu_ms).padStart(10)} cpu ${`${Math.round(m.max_rss_mb)} MB`.padStart(8)} peak RSS`;
    console.log(`best of ${o.rounds} round${o.rounds === 1 ? "" : "s"} each:`);
    const ok = (b: boolean): string => (b ? "within target" : "OVER TARGET");
    const against = (name: string, m: { max_rss_mb: number }, r: { wall: number; cpu: number }): void => {
      console.log(`  ${name.padEnd(8)} ratio ${r.wall.toFixed(2)} wall, ${r.cpu.toFixed(2)} cpu (target <= ${TARGET_RATIO}: ${ok(r.wall <= TARGET_RATIO)} by wall, ${ok(r.cpu <= TARGET_RATIO)} by cpu); ` +
        `peak ${Math.round(m.max_rss_mb)} MB (target < ${TARGET_RSS_MB} MB: ${ok(m.max_rss_mb < TARGET_RSS_MB)})`);
    };
    console.log(line("bare", figures.bare));
    console.log(line("check", figures.check) + " (checker and results.json)");
    if (figures.full) console.log(line("full", figures.full) + ` (npm run check: also report.html, ${figures.full.report_mb} MB)`);
    against("check", figures.check, figures.ratio);
    if (figures.full) against("full", figures.full, figures.full.ratio);
    const v = check[0].detail as { valid: unknown; model?: { result?: string; elapsed_ms?: number } };
    console.log(`  verdict  ${JSON.stringify(v.valid)}; model check ${v.model?.result ?? "?"} in ${v.model?.elapsed_ms ?? "?"} ms`);
    if (generated && o.keep) console.log(`run kept in ${dir}`);
  } finally {
    if (generated && !o.keep) rmSync(dir, { recursive: true, force: true });
  }
}

const round = (x: number, places = 1): number => Number(x.toFixed(places));
const ms = (x: number): string => `${Math.round(x)} ms`;
const mb = (bytes: number): number => Math.round(bytes / (1 << 20));

async function main(argv: string[]): Promise<number> {
  if (argv[0] === "--child") {
    console.log(JSON.stringify(await child(argv[1], argv[2])));
    return EXIT.valid;
  }
  let o;
  try {
    const options = commandOptions(argv, BENCH_OPTIONS, USAGE);
    if (!options) return EXIT.valid;
    o = {
      events: options.events as number, rounds: options.rounds as number, report: options.report as boolean,
      dir: options.dir as string | undefined, seed: options.seed as number, keep: options.keep as boolean, json: options.json as boolean,
    };
    // A run to time must be a run: a missing one is the user's mistake, not a failure of a child.
    if (o.dir !== undefined && !existsSync(join(o.dir, "history.ndjson"))) throw new BadInput(`--dir ${o.dir}: no history.ndjson there (a run directory to time; leave --dir out to generate one)`);
  } catch (err) {
    if (err instanceof BadInput) {
      console.error(`bench:checker: ${err.message}`);
      return EXIT.badInput;
    }
    throw err;
  }
  await bench(o);
  return EXIT.valid;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`bench:checker failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = EXIT.crash;
  },
);
