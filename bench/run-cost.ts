// What a run costs beyond its --time-limit: for each backend, a few runs of
// `fencecheck test --nemesis none` at a short time limit, each timed as a whole
// process (from its start to its exit, as a user or the test suite waits for it),
// and that time split into phases by the timestamps the run records: run.json's
// `timings` (runner/run.ts: when the servers, the workers, the operations, the
// drain and the teardown ended, on the run's clock), then the moments
// results.json and report.html were written. The fixed cost is the wall time
// minus --time-limit. Like the other bench scripts it prints figures and asserts
// nothing: the machines it runs on are shared and noisy, and a person reads them.
//
// --checkout times another checkout's build (its dist/cli/fencecheck.js) with
// the same runs, for a before and after; a build whose run.json has no `timings`
// gets the coarse phases its `started` and `finished` give.
//
//   npm run bench:run-cost -- [--runs N] [--backends redis,etcd,...] [--time-limit S] [--checkout DIR] [--json]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BadInput, ROOT, commandOptions, type OptionSpec } from "../lib/index.ts";
import { BACKEND_NAMES, SERVER_NEEDS } from "../backends/index.ts";
import { satisfied } from "../setup/index.ts";
import { benchCommand } from "./command.ts";

const COMMAND = "npm run bench:run-cost --";

const USAGE = [
  `usage: ${COMMAND} [options]`,
  "",
  "Runs `fencecheck test --nemesis none` a few times per backend at a short time",
  "limit and prints what each run cost beyond the time limit (its fixed cost:",
  "wall time minus --time-limit), median and range, split into the run's phases.",
  "A backend whose servers are not installed here is skipped with a line saying so",
  "(this bench installs nothing). Exit: 0 when the figures were printed, 254 bad",
  "options, 255 failure.",
].join("\n");


const BENCH_OPTIONS: readonly OptionSpec[] = [
  { name: "runs", kind: "int", default: 3, min: 1, max: 50, help: "runs per backend" },
  { name: "backends", kind: "list", default: BACKEND_NAMES, choices: BACKEND_NAMES, defaultText: "all", help: "the backends to run, comma-separated" },
  { name: "time-limit", kind: "number", default: 2, min: 1, max: 60, help: "each run's --time-limit in seconds" },
  { name: "seed", kind: "int", default: 1, min: 0, help: "seed of the first run; run i takes seed + i" },
  { name: "checkout", kind: "string", default: undefined, defaultText: "this one", help: "time the build of another checkout of fencecheck (DIR/dist/cli/fencecheck.js)" },
  { name: "json", kind: "flag", default: false, help: "print one JSON object per backend instead of the table" },
];

/**
 * The phases of a run, each the time between two moments; together they are the
 * run's wall time. `operations` is the time limit itself (plus the timers' lateness).
 */
const PHASES = [
  ["launch", "the process's start, module loading, setup and preflight, to the run's clock starting"],
  ["servers", "the resource, the fault proxy, the lock servers and the links up"],
  ["workers", "the workers ready with their clients, beyond the servers' start"],
  ["lead", "to time zero, the moment every worker was told to start at"],
  ["operations", "--time-limit of operations"],
  ["drain", "the heal, and the operations in flight at the end finishing"],
  ["teardown", "every process stopped, the history closed"],
  ["check", "the check, to results.json"],
  ["report", "report.html"],
  ["exit", "the process's exit"],
] as const;
type Phase = (typeof PHASES)[number][0];

interface Run {
  seed: number;
  exit_code: number;
  wall_ms: number;
  fixed_ms: number;
  /** From the run's clock starting to its teardown's end: the phases servers to teardown together, which every build records. */
  run_ms: number;
  /** null where the build did not record the moments a phase lies between. */
  phases: Record<Phase, number | null>;
}

interface Options {
  runs: number;
  backends: string[];
  timeLimitS: number;
  seed: number;
  checkout: string;
  json: boolean;
}

interface Timings {
  t0: string;
  phases_ms: Record<string, number>;
}

/** One run as a whole process, and its phases from what it left in its run directory. */
async function timeRun(o: Options, backend: string, seed: number, store: string): Promise<Run> {
  const cli = join(o.checkout, "dist/cli/fencecheck.js");
  const args = [cli, "test", "--backend", backend, "--nemesis", "none", "--time-limit", String(o.timeLimitS), "--seed", String(seed), "--store", store];
  const now = (): number => performance.timeOrigin + performance.now();
  const spawned = now();
  const { code, stdout, stderr, exited } = await new Promise<{ code: number; stdout: string; stderr: string; exited: number }>((done, fail) => {
    const child = spawn(process.execPath, args, { cwd: o.checkout, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString("utf8")));
    child.stderr.on("data", (b: Buffer) => (stderr = (stderr + b.toString("utf8")).slice(-4000)));
    child.on("error", fail);
    // The exit, not the pipes' close: a leftover holding them open would otherwise be timed too.
    child.on("exit", (c) => {
      const exited = now();
      child.on("close", () => done({ code: c ?? -1, stdout, stderr, exited }));
    });
  });
  // 0 valid, 1 invalid, 2 unknown: each a run that went through, and timed alike.
  const runDir = /^Run directory: (.+)$/m.exec(stdout)?.[1];
  if (![0, 1, 2].includes(code) || !runDir) throw new Error(`${backend} run (seed ${seed}) exited ${code}: ${stderr.trim().split("\n").slice(-3).join(" / ")}`);
  const info = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8")) as { started: string; finished: string; timings?: Timings };
  const mtime = (file: string): number => statSync(join(runDir, file)).mtimeMs;
  const checked = mtime("results.json");
  const reported = mtime("report.html");
  const wall = exited - spawned;
  // Moments on the wall clock; a build without `timings` has its run's start and end.
  const t0 = info.timings ? Date.parse(info.timings.t0) : Date.parse(info.started);
  const at = (phase: string): number | null => (info.timings && phase in info.timings.phases_ms ? t0 + info.timings.phases_ms[phase] : null);
  const tornDown = at("torn_down") ?? Date.parse(info.finished);
  const span = (from: number | null, to: number | null): number | null => (from === null || to === null ? null : round(to - from));
  const links = at("links");
  return {
    seed,
    exit_code: code,
    wall_ms: round(wall),
    fixed_ms: round(wall - o.timeLimitS * 1000),
    run_ms: round(tornDown - t0),
    phases: {
      launch: span(spawned, t0),
      servers: span(t0, links),
      workers: span(links, at("workers")),
      lead: span(at("workers"), at("go")),
      operations: span(at("go"), at("end")),
      drain: span(at("end"), at("clients_done")),
      teardown: span(at("clients_done"), tornDown),
      check: span(tornDown, checked),
      report: span(checked, reported),
      exit: span(reported, exited),
    },
  };
}

const round = (x: number): number => Math.round(x * 10) / 10;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

interface Figures {
  backend: string;
  runs: Run[];
  fixed_ms: { median: number; min: number; max: number };
  /**
   * The median of the fixed cost less the drain: what starting, stopping, checking
   * and reporting cost, without the operations in flight at the time limit, which
   * play out as they would mid-run (and catch anomalies: docs/measurements.md).
   */
  fixed_without_drain_ms: number | null;
  run_ms: number;
  /** Each phase's median over the runs that recorded it; null when none did. */
  phases_ms: Record<Phase, number | null>;
}

function figures(backend: string, runs: Run[]): Figures {
  const fixed = runs.map((r) => r.fixed_ms);
  const phases = Object.fromEntries(
    PHASES.map(([p]) => {
      const known = runs.map((r) => r.phases[p]).filter((x): x is number => x !== null);
      return [p, known.length ? round(median(known)) : null];
    }),
  ) as Record<Phase, number | null>;
  const undrained = runs.filter((r) => r.phases.drain !== null).map((r) => r.fixed_ms - r.phases.drain!);
  return {
    backend,
    runs,
    fixed_ms: { median: round(median(fixed)), min: Math.min(...fixed), max: Math.max(...fixed) },
    fixed_without_drain_ms: undrained.length ? round(median(undrained)) : null,
    run_ms: round(median(runs.map((r) => r.run_ms))),
    phases_ms: phases,
  };
}

function print(f: Figures, o: Options): void {
  const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
  console.log(`${f.backend}: fixed cost ${s(f.fixed_ms.median)} median (${s(f.fixed_ms.min)} to ${s(f.fixed_ms.max)}) over ${f.runs.length} run${f.runs.length === 1 ? "" : "s"} of --time-limit ${o.timeLimitS}`);
  if (f.fixed_without_drain_ms !== null) console.log(`  without the drain: ${s(f.fixed_without_drain_ms)} median (the start, the teardown, the check and the report)`);
  for (const [p, what] of PHASES) {
    const ms = f.phases_ms[p];
    console.log(`  ${p.padEnd(11)}${(ms === null ? "-" : `${Math.round(ms)} ms`).padStart(9)}  ${what}`);
  }
  // A build from before run.json's `timings` still says when its run started and ended.
  if (f.phases_ms.servers === null) console.log(`  servers to teardown together: ${Math.round(f.run_ms)} ms (this build records no finer phases)`);
}

/** Why a backend cannot run here, or null: its servers' programs must be installed already, since this bench installs nothing. */
function missing(backend: string): string | null {
  const r = SERVER_NEEDS[backend];
  if (!r || satisfied(r)) return null;
  return `${r.id} is not installed here (${r.getIt ?? `fencecheck setup --backend ${backend}, or apt-get install ${r.packages.join(" ")}`})`;
}

async function bench(o: Options): Promise<void> {
  const store = mkdtempSync(join(tmpdir(), "bench-run-cost-"));
  try {
    if (!o.json) console.log(`fixed cost of a run (wall time - --time-limit), ${o.checkout === ROOT ? "this checkout" : o.checkout}, node ${process.version}\n`);
    for (const backend of o.backends) {
      const why = missing(backend);
      if (why) {
        if (o.json) console.log(JSON.stringify({ backend, skipped: why }));
        else console.log(`${backend}: skipped, ${why}\n`);
        continue;
      }
      const runs: Run[] = [];
      for (let i = 0; i < o.runs; i++) runs.push(await timeRun(o, backend, o.seed + i, store));
      const f = figures(backend, runs);
      if (o.json) console.log(JSON.stringify(f));
      else {
        print(f, o);
        console.log("");
      }
    }
  } finally {
    rmSync(store, { recursive: true, force: true });
  }
}

function parse(argv: string[]): Options | null {
  const options = commandOptions(argv, BENCH_OPTIONS, USAGE);
  if (!options) return null;
  const checkout = resolve((options.checkout as string | undefined) ?? ROOT);
  if (!existsSync(join(checkout, "dist/cli/fencecheck.js"))) throw new BadInput(`--checkout ${checkout}: no dist/cli/fencecheck.js there (build it with npm run build in that checkout)`);
  return {
    runs: options.runs as number,
    backends: options.backends as string[],
    timeLimitS: options["time-limit"] as number,
    seed: options.seed as number,
    checkout,
    json: options.json as boolean,
  };
}

benchCommand("bench:run-cost", parse, bench);
