// Where the test suite's CPU goes, file by file. `npm test` is bound by CPU on two
// cores (its runs start and stop servers and node processes), so its wall time
// follows the CPU its files spend, not the time each one takes under the others'
// load. This runs the suite (or the files named) with one more setup file
// (bench/suite-cpu-probe.ts) that notes which file each vitest fork runs and
// when, and samples /proc every --interval-ms: each process's CPU since the last
// sample goes to the file its nearest vitest fork ancestor was running, the
// servers and programs a run starts included; each fork's own CPU is what the
// probe read from process.cpuUsage() at the file's end. A process no fork is an
// ancestor of (another session's, or one that outlived its parent) is counted
// apart. A run's process that starts and ends between two samples is missed, so
// the figures are a little low. Like the other bench scripts it prints figures and asserts
// nothing.
//
//   npm run bench:suite-cpu -- [--config vitest.config.ts] [--top 30] [--json] [FILE ...]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { BadInput, ROOT, helpText, parseArgs, type OptionSpec } from "../lib/index.ts";
import { TICKS_PER_S, procTable } from "../lib/proc.ts";
import { attribute } from "./suite-cpu-attribute.ts";
import { benchCommand } from "./command.ts";
import { CONFIGS } from "./suite-cpu.config.ts";

const COMMAND = "npm run bench:suite-cpu --";

const USAGE = [
  `usage: ${COMMAND} [options] [FILE ...]`,
  "",
  "Runs the test suite (vitest, or only the files named) and prints the CPU time",
  "each test file spent, its runs' servers and programs included, sampled from",
  "/proc. Exit: 0 when the figures were printed (whether or not the tests",
  "passed), 254 bad options, 255 failure.",
].join("\n");

const BENCH_OPTIONS: readonly OptionSpec[] = [
  { name: "config", kind: "string", default: "vitest.config.ts", choices: Object.keys(CONFIGS), help: "npm test's vitest config, or a tier's (npm run test:NAME runs vitest.NAME.config.ts)" },
  { name: "interval-ms", kind: "int", default: 250, min: 50, max: 5000, help: "how often /proc is sampled" },
  { name: "top", kind: "int", default: 30, min: 1, max: 1000, help: "how many files the table lists, most CPU first" },
  { name: "json", kind: "flag", default: false, help: "print one JSON object instead of the table" },
];

interface Options {
  config: string;
  intervalMs: number;
  top: number;
  json: boolean;
  files: string[];
}

/** One line of the probe's log (bench/suite-cpu-probe.ts). */
interface Mark {
  pid: number;
  ev: "start" | "end";
  file: string;
  /** On "end": the fork's own CPU since it started, in ms. */
  cpu_ms?: number;
}

/** The file each fork is running now, from the probe's marks so far. */
function running(marks: Mark[]): Map<number, string> {
  const now = new Map<number, string>();
  for (const m of marks) {
    if (m.ev === "start") now.set(m.pid, m.file);
    else if (now.get(m.pid) === m.file) now.delete(m.pid);
  }
  return now;
}

function readMarks(file: string): Mark[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.endsWith("}"))
    .map((l) => JSON.parse(l) as Mark);
}

async function run(o: Options): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "fc-suite-cpu-"));
  const log = join(dir, "marks.ndjson");
  const perFile = new Map<string, number>();
  const forks = new Set<number>();
  let elsewhere = 0;
  const seen = new Map<number, number>();
  const started = Date.now();
  const child = spawn(process.execPath, [join(ROOT, "node_modules/vitest/vitest.mjs"), "run", "--config", join(ROOT, "bench/suite-cpu.config.ts"), ...o.files], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, FENCECHECK_SUITE_CPU_LOG: log, FENCECHECK_SUITE_CPU_CONFIG: o.config },
  });
  let tail = "";
  const keep = (b: Buffer) => (tail = (tail + b.toString("utf8")).slice(-4000));
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = new Promise<number>((done) => child.on("exit", (c) => done(c ?? -1)));
  let done = false;
  void exited.then(() => (done = true));
  const sample = (): void => {
    const marks = readMarks(log);
    for (const m of marks) forks.add(m.pid);
    const table = procTable();
    const { files, elsewhere: other } = attribute(table, seen, forks, running(marks));
    for (const [pid, p] of table) seen.set(pid, p.ticks);
    for (const [file, ticks] of files) perFile.set(file, (perFile.get(file) ?? 0) + ticks);
    elsewhere += other;
  };
  // The processes already running when it starts are counted from here on, not for what they spent before.
  for (const [pid, p] of procTable()) seen.set(pid, p.ticks);
  while (!done) {
    sample();
    await new Promise((r) => setTimeout(r, o.intervalMs));
  }
  const code = await exited;
  sample();
  // Each fork's own CPU: from its start (vitest's worker and the file's imports) to the file's end, less what it had at its previous file's end.
  const before = new Map<number, number>();
  for (const m of readMarks(log)) {
    if (m.ev !== "end" || m.cpu_ms === undefined) continue;
    const own = m.cpu_ms - (before.get(m.pid) ?? 0);
    before.set(m.pid, m.cpu_ms);
    perFile.set(m.file, (perFile.get(m.file) ?? 0) + (own * TICKS_PER_S) / 1000);
  }
  rmSync(dir, { recursive: true, force: true });
  const wallS = (Date.now() - started) / 1000;
  const files = [...perFile].map(([file, ticks]) => ({ file: file.startsWith("/") ? relative(ROOT, file) : file, cpu_s: ticks / TICKS_PER_S })).sort((a, b) => b.cpu_s - a.cpu_s);
  const total = files.reduce((s, f) => s + f.cpu_s, 0);
  const vitestLine = tail.replace(/\x1b\[[0-9;]*m/g, "").match(/^\s*Tests\s+.*$/m)?.[0].trim() ?? "(no summary line)";
  const summary = { wall_s: Math.round(wallS), vitest_exit: code, vitest: vitestLine, cpu_s: Math.round(total), elsewhere_cpu_s: Math.round(elsewhere / TICKS_PER_S), files };
  if (o.json) {
    console.log(JSON.stringify(summary));
    return 0;
  }
  console.log(`suite: ${summary.wall_s} s wall, vitest exit ${code} (${vitestLine})`);
  console.log(`CPU of its files: ${summary.cpu_s} s over ${files.length} files; other processes: ${summary.elsewhere_cpu_s} s`);
  console.log("");
  console.log("   cpu s  share  file");
  for (const f of files.slice(0, o.top)) console.log(`${f.cpu_s.toFixed(1).padStart(8)}  ${((100 * f.cpu_s) / total).toFixed(1).padStart(4)}%  ${f.file}`);
  return 0;
}

function parse(argv: string[]): Options | null {
  const { options, positional, help } = parseArgs(argv, BENCH_OPTIONS);
  if (help) {
    process.stdout.write(helpText(USAGE, BENCH_OPTIONS));
    return null;
  }
  if (process.platform !== "linux") throw new BadInput("this bench reads /proc: it runs on Linux only");
  const config = options.config as string;
  for (const f of positional) if (f.startsWith("-")) throw new BadInput(`${f}: not an option of this bench (${COMMAND} --help lists them)`);
  return { config, intervalMs: options["interval-ms"] as number, top: options.top as number, json: options.json as boolean, files: positional };
}

benchCommand("bench:suite-cpu", parse, run);
