// Starting resource/main.ts as a child process and stopping it again.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { T0_ENV } from "../store/clock.ts";

export interface ResourceOptions {
  /** resource.ndjson; appended to. */
  logPath: string;
  /** Refuse stale fencing tokens (otherwise accept everything and only record). */
  fencing: boolean;
  /** Reads that carry a fence advance the key's fence (closes lost updates, C1). */
  fenceReads?: boolean;
  /** The run's start on the monotonic clock (newRunStart()). */
  t0: bigint;
  /** Where the process's own output goes (appended); kept in memory if absent. */
  logFile?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** How long to wait for the process to listen. */
  startTimeoutMs?: number;
}

export interface ResourceHandle {
  /** http://127.0.0.1:<port>, without a trailing slash. */
  url: string;
  port: number;
  pid: number;
  /** SIGTERM, then SIGKILL after a short grace; resolves once the process has exited. */
  stop(): Promise<void>;
}

const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));
// An absolute URL, because `--import tsx` would be resolved from the caller's cwd.
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const STOP_GRACE_MS = 2_000;
const TAIL_BYTES = 4_096;

export async function startResource(opts: ResourceOptions): Promise<ResourceHandle> {
  const logPath = resolve(opts.logPath);
  const logFile = opts.logFile === undefined ? undefined : resolve(opts.logFile);
  const args = ["--import", TSX, MAIN, "--log", logPath, "--fence", opts.fencing ? "on" : "off", "--port", String(opts.port ?? 0)];
  if (opts.fenceReads) args.push("--fence-reads");
  // The resource exits when this pipe closes, which is how it learns that we died.
  args.push("--watch-stdin");

  // The child writes its diagnostics straight into the log file, so they are kept
  // even if this process stops reading or dies.
  const stderrFd = logFile === undefined ? null : openSync(logFile, "a");
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, args, {
      env: { ...process.env, [T0_ENV]: opts.t0.toString() },
      stdio: ["pipe", "pipe", stderrFd ?? "pipe"],
      // A process group of its own, like every server of a run: a Ctrl-C meant for
      // the runner must not stop the resource before the runner has healed the
      // faults and let the clients finish.
      detached: true,
    });
  } finally {
    if (stderrFd !== null) closeSync(stderrFd);
  }

  let tail = "";
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString("utf8")).slice(-TAIL_BYTES);
  };
  // Both pipes are drained for the process's whole life: writes to a full pipe
  // would block it.
  child.stderr?.on("data", keep);
  child.stdin?.on("error", () => {});
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const describeExit = (): string =>
    `resource process ${child.pid} exited (code ${child.exitCode}, signal ${child.signalCode})`;
  const logTail = (): string => {
    const text = logFile === undefined ? tail : readTail(logFile);
    return text.trim() === "" ? "(no output)" : text.trimEnd();
  };

  let port: number;
  try {
    port = await waitForPort(child, opts.startTimeoutMs ?? 15_000, describeExit);
  } catch (e) {
    // A process that never started has no exit to wait for.
    if (child.pid !== undefined) {
      child.kill("SIGKILL");
      await exited;
    }
    throw new Error(`${(e as Error).message}; its output ends with:\n${logTail()}`);
  }
  child.stdout?.on("data", keep);
  // kill() reports failures other than "already gone" as an event; unheard, it
  // would crash the caller.
  child.on("error", (e) => keep(Buffer.from(`(parent) ${e.message}\n`)));
  // A caller that forgets stop() must still be able to exit; the resource then
  // sees its stdin close and exits too.
  unrefAll(child);

  let stopping: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid as number,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.ref();
        child.kill("SIGTERM");
        // A paused (SIGSTOPped) resource only acts on SIGTERM once continued.
        child.kill("SIGCONT");
        const kill = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
        await exited;
        clearTimeout(kill);
      })();
      return stopping;
    },
  };
}

function waitForPort(child: ChildProcess, timeoutMs: number, describeExit: () => string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    let buffered = "";
    const finish = (err: Error | null, port?: number): void => {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.off("exit", onExit);
      child.off("error", onError);
      if (err) reject(err);
      else resolvePort(port as number);
    };
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString("utf8");
      const nl = buffered.indexOf("\n");
      if (nl < 0) return;
      const line = buffered.slice(0, nl);
      try {
        const port = (JSON.parse(line) as { port?: unknown }).port;
        if (typeof port === "number" && Number.isInteger(port) && port > 0) return finish(null, port);
      } catch {
        // fall through: anything but the port line first is a broken resource
      }
      finish(new Error(`resource process ${child.pid} printed ${JSON.stringify(line)} instead of {"port":N}`));
    };
    const onExit = (): void => finish(new Error(`${describeExit()} before it listened`));
    const onError = (e: Error): void => finish(new Error(`could not start the resource process: ${e.message}`));
    const timer = setTimeout(() => finish(new Error(`resource process ${child.pid} did not listen within ${timeoutMs} ms`)), timeoutMs);
    child.stdout?.on("data", onData);
    child.once("exit", onExit);
    child.once("error", onError);
  });
}

function readTail(path: string): string {
  try {
    const fd = openSync(path, "r");
    try {
      const size = fstatSync(fd).size;
      const buf = Buffer.alloc(Math.min(size, TAIL_BYTES));
      readSync(fd, buf, 0, buf.length, size - buf.length);
      return buf.toString("utf8");
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    return `(could not read ${path}: ${(e as Error).message})`;
  }
}

type Unrefable = { unref?: () => void };

function unrefAll(child: ChildProcess): void {
  child.unref();
  for (const s of [child.stdin, child.stdout, child.stderr]) (s as unknown as Unrefable | null)?.unref?.();
}
