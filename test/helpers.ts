// Shared by the integration tests: temporary run directories, and the question
// every teardown test asks: is any process of this run still alive?
import { it, expect } from "vitest";
import { mkdtempSync, mkdirSync, readdirSync, readlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The directories tempRunDir made in this test file, which test/cleanup.ts removes when the file is done. */
export const TEMP_DIRS: string[] = [];

/** An empty temporary directory, removed with the file's run directories (test/cleanup.ts). */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  TEMP_DIRS.push(dir);
  return dir;
}

/** A run directory of the test's (with its logs/), removed as tempDir's are. */
export function tempRunDir(prefix = "fencecheck-"): string {
  const dir = tempDir(prefix);
  mkdirSync(join(dir, "logs"));
  return dir;
}

/**
 * Live processes that belong to a run under `needle`: their command line or their
 * working directory mentions it. The working directory matters: a server that
 * rewrites its command line (Postgres' backends: "postgres: postgres ...") runs
 * in its data directory.
 */
export function processesMentioning(needle: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    if (Number(pid) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
      let cwd = "";
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {
        // a process that just exited
      }
      if (cmd.includes(needle) || cwd.includes(needle)) found.push(`${pid} ${cmd} (in ${cwd})`);
    } catch {
      // gone while we looked
    }
  }
  return found;
}

export async function waitFor(cond: () => boolean, timeoutMs: number, stepMs = 50): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  return cond();
}

/** The processes of a run (under `needle`) still alive once it has had `timeoutMs` to go: none, when all went. */
export async function survivors(needle: string, timeoutMs = 8000): Promise<string[]> {
  await waitFor(() => processesMentioning(needle).length === 0, timeoutMs);
  return processesMentioning(needle);
}

/**
 * The one rerun of the suite: `make` is called again, up to `times` calls in all and
 * `pauseMs` apart, while `ready` says its result shows nothing either way (a
 * precondition about timing that a loaded machine missed: who asked first, whether
 * a grant fell in a window, a client still connecting). The last result is
 * returned whatever it shows, for the caller's checks to judge, so a behaviour
 * that stops happening still fails.
 */
export async function again<T>(make: () => Promise<T>, ready: (t: T) => boolean, times = 3, pauseMs = 0): Promise<T> {
  let r = await make();
  for (let n = 2; n <= times && !ready(r); n++) {
    if (pauseMs) await new Promise((w) => setTimeout(w, pauseMs));
    r = await make();
  }
  return r;
}

/** Poll until `f` resolves truthy (a throw counts as not yet); its last value. */
export async function eventually<T>(f: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f().catch(() => null as T);
    if (v || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A process's state letter from /proc (T: stopped, Z: a zombie), or null once it is gone. */
export function procState(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "")[0];
  } catch {
    return null;
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

import { spawn, type ChildProcess } from "node:child_process";
import { createServer as createNetServer } from "node:net";
import { fileURLToPath } from "node:url";
import { readFileSync, existsSync, realpathSync, chmodSync, statSync } from "node:fs";

export const REPO = fileURLToPath(new URL("..", import.meta.url));

export interface CliRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

/** `node` arguments that run `fencecheck <command>` from the built bin (dist/cli/fencecheck.js, brought up to date by test/build-once.ts), as a user's `fencecheck` does. */
export function cliArgs(command: string): string[] {
  return [join(REPO, "dist", "cli", "fencecheck.js"), command];
}

/** The environment of a command the suite runs: without npm's INIT_CWD, which would send it to where `npm test` was typed (lib/user-dir.ts). */
export function cliEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const all: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete all.INIT_CWD;
  return all;
}

/** Run `fencecheck <command>` as a user would (the built bin), in a process group of its own, in the checkout unless `cwd` says otherwise. */
export function runCli(command: string, args: string[], env: NodeJS.ProcessEnv = {}, cwd = REPO): CliRun {
  return startNode([...cliArgs(command), ...args], env, cwd);
}

/**
 * Run `node ARGS` in the checkout to its end, killed (its process group) after
 * `timeoutMs`. Never spawnSync for a command that can take a minute: it stops
 * the test worker's event loop, and vitest's call to its main process that was
 * under way then times out at 60 s ("Timeout calling onTaskUpdate"), failing
 * the whole suite though every test passed.
 */
export async function runNode(args: string[], timeoutMs: number): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const r = startNode(args);
  const timer = setTimeout(() => {
    try {
      process.kill(-r.child.pid!, "SIGKILL");
    } catch {
      // Gone already.
    }
  }, timeoutMs);
  const status = await r.exit;
  clearTimeout(timer);
  return { status, stdout: r.stdout(), stderr: r.stderr() };
}

/** `node ARGS` in a process group of its own, its output collected. */
function startNode(args: string[], env: NodeJS.ProcessEnv = {}, cwd = REPO): CliRun {
  const child = spawn(process.execPath, args, {
    cwd,
    env: cliEnv(env),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "", err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  // 'exit' can come before the last of stdout and stderr is read (a busy machine):
  // the streams' 'close' says they are drained, waited for briefly, since a
  // process the command left behind could hold them open.
  const exit = new Promise<number | null>((resolve) =>
    child.on("exit", (code, signal) => {
      const result = code ?? (signal ? 128 : null);
      const late = setTimeout(() => resolve(result), 1000);
      child.on("close", () => {
        clearTimeout(late);
        resolve(result);
      });
    }),
  );
  return { child, stdout: () => out, stderr: () => err, exit };
}

/** The newest run directory of a store (histories/latest). */
export function latestRun(store: string): string {
  return join(store, "latest");
}

export function readNdjson(path: string): Array<Record<string, unknown>> {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

/** A history's granted acquires: its acquire events of type ok. */
export function grantsIn<E extends { f?: unknown; type?: unknown }>(events: readonly E[]): E[] {
  return events.filter((e) => e.f === "acquire" && e.type === "ok");
}

/** The newest run of a store as stored: its directory (links resolved), run.json, and its history's events without the header. */
export function storedRun(store: string) {
  const dir = realpathSync(latestRun(store));
  return { dir, run: JSON.parse(readFileSync(join(dir, "run.json"), "utf8")), events: readNdjson(join(dir, "history.ndjson")).slice(1) };
}

/** Every file under `dir` that has `text` in it: where a secret was written down. */
export function filesWith(dir: string, text: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile() && readFileSync(f, "utf8").includes(text));
}

/** What a whole `test-jepsen` run in a store of its own said, and what it stored. */
export interface StoredRun {
  exit: number | null;
  /** The store it ran in (a temporary directory of its own). */
  store: string;
  /** stdout and stderr, for a failed expectation to show. */
  output: string;
  stderr: string;
  /** results.json, or null when no run was stored (refused options). */
  results: { valid: boolean | "unknown"; anomaly_types: string[]; stats: Record<string, unknown> } | null;
  history: Array<Record<string, unknown>>;
}

export async function jepsenRun(args: string[], prefix = "fc-run-"): Promise<StoredRun> {
  const store = tempRunDir(prefix);
  // mkdtemp makes it 0700: a Postgres run's server (the postgres user) must pass through.
  chmodSync(store, 0o755);
  const cli = runCli("test", [...args, "--store", store]);
  const exit = await cli.exit;
  const run = latestRun(store);
  const stored = existsSync(run) ? realpathSync(run) : null;
  return {
    exit,
    store,
    output: cli.stdout() + cli.stderr(),
    stderr: cli.stderr(),
    results: stored && existsSync(join(stored, "results.json")) ? JSON.parse(readFileSync(join(stored, "results.json"), "utf8")) : null,
    history: stored ? readNdjson(join(stored, "history.ndjson")) : [],
  };
}

/** One sample of Prometheus text: `name{a="x",b="y"} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * The samples of a Prometheus text page (label values as prom-client writes them:
 * no escaped quotes). Throws where the page breaks the format in a way Prometheus
 * would refuse: a line that is not a sample, or a family declared twice.
 */
export function parseMetrics(text: string): Sample[] {
  const declared = new Set<string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const type = /^# TYPE (\S+) /.exec(line);
    if (type) {
      if (declared.has(type[1]!)) throw new Error(`metric family ${type[1]} declared twice`);
      declared.add(type[1]!);
    }
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The samples named `name` whose labels include `labels`. */
export function samplesOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** A free port on 127.0.0.1, held by a listener of ours until `close()`: a port someone else has taken. */
export async function takenPort(): Promise<{ port: number; close(): void }> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as { port: number }).port, close: () => server.close() };
}

/** One test per bad command line: refused with exit 254, the message matched, and no store made. */
export function refusesEach(command: string, bad: ReadonlyArray<[string[], RegExp]>): void {
  for (const [args, message] of bad) {
    it(`refuses ${args.join(" ")}`, async () => {
      const store = tempRunDir("fc-opts-");
      const r = runCli(command, ["--store", join(store, "s"), ...args]);
      expect(await r.exit).toBe(254);
      expect(r.stderr()).toMatch(message);
      expect(existsSync(join(store, "s"))).toBe(false);
    });
  }
}

/** Every file under `dir` with its bytes, to tell that nothing in it changed. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p, `${rel}${e.name}/`);
      else out[`${rel}${e.name}`] = readFileSync(p, "base64");
    }
  };
  walk(dir, "");
  return out;
}
