// Starting a Node service of ours (the resource, the fault proxy) as a child
// process and stopping it again. A process of its own keeps the service off the
// runner's event loop, so faults aimed at the runner or its clients (pauses,
// kills, a busy loop) do not also stop the thing that judges or carries their
// traffic. The child prints {"port":N} on stdout once it listens and says
// everything else on stderr; it watches its stdin (lifeline.ts), the pipe we
// hold, to learn that we died.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { resolve } from "node:path";
import { nodeArgsFor } from "./paths.ts";
import { markedEnv } from "./owner.ts";

export interface ServiceOptions {
  /** What the service is called in errors, e.g. "resource". */
  name: string;
  /** Absolute path of the entry: a source (run through tsx) or a built bundle (lib/paths.ts entryFile). */
  main: string;
  /** The entry's own arguments; --watch-stdin is always added. */
  args: string[];
  /** The child's whole environment (default: ours). */
  env?: NodeJS.ProcessEnv;
  /** Where the child's stderr goes (appended); kept in memory if absent. */
  logFile?: string;
  /** How long to wait for {"port":N}. */
  readyTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before SIGKILL. */
  stopGraceMs?: number;
}

export interface ServiceHandle {
  /** http://127.0.0.1:<port>, without a trailing slash. */
  url: string;
  port: number;
  pid: number;
  /** SIGTERM, then SIGKILL after a grace; resolves once the process has exited. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 2_000;
const TAIL_BYTES = 4_096;

export async function spawnService(opts: ServiceOptions): Promise<ServiceHandle> {
  const logFile = opts.logFile === undefined ? undefined : resolve(opts.logFile);
  // The service exits when this pipe closes, which is how it learns that we died.
  const args = [...nodeArgsFor(opts.main), opts.main, ...opts.args, "--watch-stdin"];

  // The child writes its diagnostics straight into the log file, so they are kept
  // even if this process stops reading or dies.
  const stderrFd = logFile === undefined ? null : openSync(logFile, "a");
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, args, {
      // Marked as ours (lib/owner.ts): a service frozen by a pause does not see its
      // stdin close, and only the marker lets a later run find it.
      env: markedEnv(opts.env ?? process.env),
      stdio: ["pipe", "pipe", stderrFd ?? "pipe"],
      // A process group of its own, like every server of a run: a Ctrl-C meant for
      // the runner must not stop the service before the runner has healed the
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
  const who = child.pid === undefined ? opts.name : `${opts.name} (pid ${child.pid})`;
  const logTail = (): string => {
    const text = logFile === undefined ? tail : readTail(logFile);
    return text.trim() === "" ? "(no output)" : text.trimEnd();
  };

  let port: number;
  try {
    port = await waitForPort(child, who, opts.readyTimeoutMs ?? READY_TIMEOUT_MS);
  } catch (e) {
    // A process that never started has no exit to wait for.
    if (child.pid !== undefined) {
      child.kill("SIGKILL");
      await exited;
    }
    const where = logFile === undefined ? "" : ` (${logFile})`;
    throw new Error(`${(e as Error).message}; its output${where} ends with:\n${logTail()}`);
  }
  child.stdout?.on("data", keep);
  // kill() reports failures other than "already gone" as an event; unheard, it
  // would crash the caller.
  child.on("error", (e) => keep(Buffer.from(`(parent) ${e.message}\n`)));
  // A caller that forgets stop() must still be able to exit; the service then
  // sees its stdin close and exits too.
  unrefAll(child);

  const grace = opts.stopGraceMs ?? STOP_GRACE_MS;
  let stopping: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid as number,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        // An otherwise idle caller must not exit before the child is gone.
        child.ref();
        child.kill("SIGTERM");
        // A paused (SIGSTOPped) service only acts on SIGTERM once continued.
        child.kill("SIGCONT");
        const kill = setTimeout(() => child.kill("SIGKILL"), grace);
        await exited;
        clearTimeout(kill);
      })();
      return stopping;
    },
  };
}

function waitForPort(child: ChildProcess, who: string, timeoutMs: number): Promise<number> {
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
        // fall through: anything but the port line first is a broken service
      }
      finish(new Error(`${who} printed ${JSON.stringify(line)} instead of {"port":N}`));
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void =>
      finish(new Error(`${who} exited (code ${code}, signal ${signal}) before it listened`));
    const onError = (e: Error): void => finish(new Error(`could not start ${who}: ${e.message}`));
    const timer = setTimeout(() => finish(new Error(`${who} did not listen within ${timeoutMs} ms`)), timeoutMs);
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
