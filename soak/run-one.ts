// One run of a soak: `fencecheck test` as a child process of its own, so a run that
// crashes (a server that will not start, a worker that dies, the tool itself
// throwing) is one crashed run and the soak goes on, and each run is stored by
// exactly the code that stores a single run. The child's output goes to a file
// in the soak directory; what the soak needs from it is the run directory (the
// first line it prints) and its exit code, and the rest it reads from the run's
// own files.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { entryArgs } from "../lib/index.ts";
import { RUN_FILES, type Results } from "../store/events.ts";
import type { RunRecord, RunStatus } from "./records.ts";

/** The test's first line names the run directory: "fencecheck: <test>, seed N, run directory DIR". */
const RUN_DIR_LINE = /^fencecheck: .*, run directory (.+)$/m;

export interface RunRequest {
  config: string;
  index: number;
  seed: number;
  argv: string[];
  /** The soak directory; the record's paths are relative to it. */
  soakDir: string;
  /** Where the child's stdout and stderr go. */
  outputFile: string;
}

export interface RunningRun {
  pid: number | undefined;
  /** Passes a signal on (Ctrl-C): the child heals, tears down and exits 130. */
  signal(sig: NodeJS.Signals): void;
  done: Promise<RunRecord>;
}

/**
 * One of our subcommands (`fencecheck test`, `fencecheck check`) as a child whose
 * output goes to `outputFile`. The child watches the pipe on its stdin
 * (FENCECHECK_LIFELINE): if the soak is killed hard, the pipe closes and a run
 * heals, tears down and stops, instead of running on with nobody to count it.
 */
export function spawnCommand(command: "test" | "check", argv: string[], outputFile: string): ChildProcess {
  const out = openSync(outputFile, "a");
  try {
    const child = spawn(process.execPath, [...entryArgs("cli/fencecheck"), command, ...argv], {
      stdio: ["pipe", out, out],
      env: { ...process.env, FENCECHECK_LIFELINE: "stdin" },
    });
    child.stdin?.on("error", () => {});
    return child;
  } finally {
    closeSync(out);
  }
}

export function startRun(req: RunRequest): RunningRun {
  const started = Date.now();
  const child = spawnCommand("test", req.argv, req.outputFile);
  const done = new Promise<RunRecord>((resolve) => {
    let spawnError: Error | null = null;
    child.once("error", (err) => (spawnError = err));
    child.once("close", (code, signal) => {
      const wallS = (Date.now() - started) / 1000;
      resolve(recordOf(req, code, signal, wallS, spawnError));
    });
  });
  return {
    pid: child.pid,
    signal: (sig) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    },
    done,
  };
}

/** The record of a finished run, from its exit and the files it left. */
export function recordOf(req: RunRequest, code: number | null, signal: NodeJS.Signals | null, wallS: number, spawnError: Error | null): RunRecord {
  const output = readOutput(req.outputFile);
  const dirMatch = RUN_DIR_LINE.exec(output);
  const runDir = dirMatch ? dirMatch[1].trim() : null;
  const base: RunRecord = {
    config: req.config,
    index: req.index,
    seed: req.seed,
    status: "crashed",
    exit_code: code,
    run_dir: runDir === null ? null : relative(req.soakDir, runDir),
    output: relative(req.soakDir, req.outputFile),
    wall_s: Math.round(wallS * 10) / 10,
    anomaly_types: [],
    anomaly_counts: {},
    acquire_ms: null,
    faults: {},
    argv: req.argv,
  };
  if (spawnError) return { ...base, error: `could not start fencecheck test: ${spawnError.message}` };
  if (signal) return { ...base, error: `fencecheck test was killed by ${signal}${tail(output)}` };
  if (code === 130) return { ...base, status: "interrupted", error: "interrupted before its time limit; not checked" };
  const status = ({ 0: "valid", 1: "invalid", 2: "unknown" } as Record<number, RunStatus>)[code ?? -1];
  if (!status) return { ...base, error: `fencecheck test exited ${code}${tail(output)}` };
  const results = runDir === null ? null : readResults(runDir);
  if (!results) return { ...base, error: `fencecheck test exited ${code} but left no readable results.json${runDir ? ` in ${runDir}` : ""}` };
  return { ...base, status, ...figuresOf(results) };
}

/** What a summary needs of results.json. */
export function figuresOf(results: Results): Pick<RunRecord, "anomaly_types" | "anomaly_counts" | "acquire_ms" | "faults" | "stale_writes_refused" | "lost_holds" | "protocol_errors"> {
  const stats = results.stats ?? {};
  const lat = stats.acquire_latency_ms as { p50?: unknown; p99?: unknown } | null | undefined;
  const counts: Record<string, number> = {};
  for (const t of results.anomaly_types) counts[t] = Array.isArray(results.anomalies?.[t]) ? results.anomalies[t].length : 0;
  const reported = stats.anomaly_counts;
  if (typeof reported === "object" && reported !== null) for (const [t, n] of Object.entries(reported)) if (typeof n === "number") counts[t] = n;
  const faults: Record<string, number> = {};
  if (typeof stats.faults === "object" && stats.faults !== null) for (const [f, n] of Object.entries(stats.faults)) if (typeof n === "number") faults[f] = n;
  return {
    anomaly_types: [...results.anomaly_types],
    anomaly_counts: counts,
    acquire_ms: lat && typeof lat.p50 === "number" && typeof lat.p99 === "number" ? { p50: lat.p50, p99: lat.p99 } : null,
    faults,
    ...(typeof stats.stale_writes_refused === "number" ? { stale_writes_refused: stats.stale_writes_refused } : {}),
    ...(typeof stats.protocol_errors === "number" && stats.protocol_errors > 0 ? { protocol_errors: stats.protocol_errors } : {}),
    ...lostHoldsOf(stats.lost_holds),
  };
}

function lostHoldsOf(v: unknown): Pick<RunRecord, "lost_holds"> {
  const l = v as { holds?: unknown; told?: unknown; told_after_ms?: { p50?: unknown } | null } | undefined;
  if (typeof l?.holds !== "number" || typeof l.told !== "number") return {};
  const p50 = l.told_after_ms?.p50;
  return { lost_holds: { holds: l.holds, told: l.told, told_after_p50_ms: typeof p50 === "number" ? p50 : null } };
}

export function readResults(runDir: string): Results | null {
  try {
    const r = JSON.parse(readFileSync(`${runDir}/${RUN_FILES.results}`, "utf8")) as Results;
    return r && Array.isArray(r.anomaly_types) && "valid" in r ? r : null;
  } catch {
    return null;
  }
}

function readOutput(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/** The child's last words, for a crashed run's error. */
function tail(output: string): string {
  const lines = output.trim().split("\n").filter((l) => l.trim() !== "");
  const failed = lines.filter((l) => /^fencecheck( failed)?: /.test(l) && !RUN_DIR_LINE.test(l)).at(-1);
  const last = failed ?? lines.at(-1);
  return last ? `: ${last.trim().slice(0, 400)}` : "";
}
