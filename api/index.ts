// The programmatic face of fencecheck: `import { runTest, checkRun } from
// "fencecheck"`, for teams that drive tests from their own test runner (vitest,
// jest) or check histories their own harness recorded. The options are the
// command's (camelCase: `timeLimit` is --time-limit) and the results are
// results.json, so a test written here and a command line say the same thing.
//
// runTest runs `fencecheck test` as a child process, as a soak does: a run starts
// servers, worker processes and signal handlers of its own, which the caller's
// process (a test runner's worker) should not carry, and a TypeScript adapter is
// loaded there as on the command line. checkRun reads files only, in this process.
import { spawn } from "node:child_process";
import { readFileSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { checkAndReport } from "../cli/check-run.ts";
import { BadInput, EXIT } from "../lib/exit.ts";
import { entryArgs } from "../lib/paths.ts";
import { nearest } from "../lib/nearest.ts";
import { TEST_OPTIONS } from "../runner/index.ts";
import { RUN_FILES, type AnomalyType, type Results, type Validity, type Witness } from "../store/events.ts";
import type { TestOptions } from "./test-options.ts";

export type { AnomalyType, Results, Validity, Witness, TestOptions };
export { BadInput, EXIT };
export { ANOMALY_TYPES } from "../store/events.ts";

/** How runTest runs. */
export interface RunTestControl {
  /** Each line the run prints on its stderr (progress, warnings); none by default. */
  log?: (line: string) => void;
  /** The directory relative paths in the options (client, store, endpoints) are relative to; default process.cwd(). */
  cwd?: string;
  /** Aborting stops the run as Ctrl-C does (faults healed, servers stopped, the history kept); runTest then rejects with RunInterrupted. */
  signal?: AbortSignal;
}

export interface TestResult {
  /** The run's directory in the store, absolute. */
  runDir: string;
  /** The command's exit code: 0 valid, 1 invalid, 2 unknown. */
  exitCode: number;
  valid: Validity;
  /** results.json of the run. */
  results: Results;
  /** The summary the command prints: the verdict, each anomaly with its first witness, the figures. */
  summary: string;
}

export interface CheckRunOptions {
  /** Write results.json and report.html here and leave the run untouched; default: into the run. */
  out?: string;
  /** strict: the model check's strict-mutex-violation makes the run invalid; default: as the run was made. */
  model?: "lease" | "strict";
  /** ms the model check may take in all before it says unknown (default 10000). */
  modelBudgetMs?: number;
}

export interface CheckResult {
  exitCode: number;
  valid: Validity;
  results: Results;
  summary: string;
  /** Lines a person should see: skipped lines, why a verdict is unknown. */
  warnings: string[];
  /** Where results.json and report.html were written. */
  outDir: string;
}

/** A run stopped before its time limit (its signal aborted); what it recorded is in runDir. */
export class RunInterrupted extends Error {
  constructor(readonly runDir: string | null) {
    super(`the run was interrupted; its history so far is in ${runDir ?? "(no run directory was made)"}`);
    this.name = "RunInterrupted";
  }
}

const kebab = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const camel = (name: string): string => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The `fencecheck test` arguments `options` stand for; BadInput names an option that is not one of the command's. */
export function testArgs(options: TestOptions): string[] {
  const argv: string[] = [];
  for (const [key, value] of Object.entries(options as Record<string, unknown>)) {
    if (value === undefined) continue;
    const name = kebab(key);
    const spec = TEST_OPTIONS.find((s) => s.name === name);
    if (!spec || key.includes("-")) {
      const near = nearest(key, TEST_OPTIONS.map((s) => camel(s.name)));
      throw new BadInput(`runTest: unknown option ${JSON.stringify(key)}${near ? `; did you mean ${near}?` : ""} (the options of fencecheck test, in camelCase: timeLimit for --time-limit)`);
    }
    if (spec.kind === "flag") {
      if (typeof value !== "boolean") throw new BadInput(`runTest: option ${key} is true or false, got ${JSON.stringify(value)}`);
      if (value) argv.push(`--${name}`);
    } else if (spec.kind === "on-off" && typeof value === "boolean") argv.push(`--${name}`, value ? "on" : "off");
    else if (Array.isArray(value)) argv.push(`--${name}`, value.map(String).join(","));
    else if (typeof value === "string" || typeof value === "number") argv.push(`--${name}`, String(value));
    else throw new BadInput(`runTest: option ${key} must be a string or a number${spec.kind === "list" ? " or a list" : ""}, got ${JSON.stringify(value)}`);
  }
  return argv;
}

/**
 * Runs one test as `fencecheck test` does and resolves once it is checked and
 * reported. Options the command refuses reject with BadInput and its message,
 * nothing started; a run that could not be made rejects with an Error carrying
 * the command's last words. The Debian packages the test needs are installed first,
 * as the command does.
 */
export async function runTest(options: TestOptions = {}, control: RunTestControl = {}): Promise<TestResult> {
  const cwd = resolve(control.cwd ?? process.cwd());
  const argv = testArgs(options);
  const child = spawn(process.execPath, [...entryArgs("cli/fencecheck"), "test", ...argv], {
    cwd,
    // Our pipe on its stdin: were this process to die, the run stops as on Ctrl-C.
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...withoutNpmDirectory(process.env), FENCECHECK_LIFELINE: "stdin" },
  });
  child.stdin.on("error", () => {});
  let out = "";
  let err = "";
  let partial = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
    const lines = (partial + d.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const l of lines) control.log?.(l);
  });
  const stop = (): void => void child.kill("SIGINT");
  if (control.signal?.aborted) stop();
  control.signal?.addEventListener("abort", stop, { once: true });
  const code = await new Promise<number>((done, fail) => {
    child.once("error", fail);
    child.once("close", (c, sig) => done(c ?? (sig ? 128 : EXIT.crash)));
  }).finally(() => control.signal?.removeEventListener("abort", stop));
  if (partial) control.log?.(partial);
  const named = /^Run directory: (.+)$/m.exec(out)?.[1] ?? /^fencecheck: .*, run directory (.+)$/m.exec(err)?.[1] ?? null;
  const runDir = named === null ? null : realpathSync(resolve(cwd, named.trim()));
  if (code === 130) throw new RunInterrupted(runDir);
  if (code === EXIT.badInput) throw new BadInput(lastWords(err));
  if (runDir === null || code > EXIT.unknown) throw new Error(`fencecheck test exited ${code}: ${lastWords(err)}`);
  const results = JSON.parse(readFileSync(join(runDir, RUN_FILES.results), "utf8")) as Results;
  const summary = out.slice(0, Math.max(0, out.search(/^Run directory: /m))).trimEnd();
  return { runDir, exitCode: code, valid: results.valid, results, summary };
}

/**
 * Checks a stored run (a directory with history.ndjson, and resource.ndjson and
 * run.json where the run has them) as `fencecheck check` does: the verdict with
 * its witnesses, and results.json and report.html written into `out` or the run.
 * A directory that is not a run rejects with BadInput naming the file and line.
 */
export async function checkRun(runDir: string, options: CheckRunOptions = {}): Promise<CheckResult> {
  const checked = await checkAndReport(runDir, { model: options.model, modelBudgetMs: options.modelBudgetMs }, options.out ?? runDir, false);
  return { exitCode: checked.exitCode, valid: checked.results.valid, results: checked.results, summary: checked.summary, warnings: checked.warnings, outDir: checked.outDir };
}

/** INIT_CWD would send the child where npm was started (lib/user-dir.ts); here the directory is ours to give. */
function withoutNpmDirectory(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  delete copy.INIT_CWD;
  return copy;
}

function lastWords(stderr: string): string {
  const lines = stderr.trim().split("\n").filter(Boolean);
  return (lines.length ? lines.slice(-6).join("\n") : "(it printed nothing)").replace(/^fencecheck test: /, "");
}
