// Running the built Toxiproxy on a port of our own on loopback: as a process of
// a run's group (killed at teardown, or by the reaper if the runner dies), or on
// its own for the conformance tests and the proxy benchmark.
import { spawn } from "node:child_process";
import { openSync, closeSync } from "node:fs";
import type { ProcessGroup } from "../cluster/processes.ts";
import { sleep } from "../lib/index.ts";
import { markedEnv } from "../lib/owner.ts";
import { SETUP_COMMAND, TOXIPROXY_VERSION, toxiproxyBinary, toxiproxyBuilt } from "./build.ts";

export interface RunningToxiproxy {
  /** http://127.0.0.1:<port>, what `new Toxiproxy(url)` wants. */
  url: string;
  port: number;
  pid: number;
  /** What its GET /version said. */
  version: string;
  /** SIGTERM, SIGKILL after a grace; resolves once it has exited. */
  stop(): Promise<void>;
}

export interface ToxiproxyStart {
  /** Never Toxiproxy's 8474: a Toxiproxy of the user's may be there. */
  port: number;
  /** Its log (JSON lines) goes here. */
  logFile: string;
  /** A run's process group, which then owns the process; absent: a child of this process. */
  group?: ProcessGroup;
  readyTimeoutMs?: number;
}

export class ToxiproxyMissing extends Error {}

export async function startToxiproxy(opts: ToxiproxyStart): Promise<RunningToxiproxy> {
  if (!toxiproxyBuilt()) throw new ToxiproxyMissing(`Toxiproxy v${TOXIPROXY_VERSION} is not built (${toxiproxyBinary()}): run ${SETUP_COMMAND}`);
  const args = ["-host", "127.0.0.1", "-port", String(opts.port)];
  let pid: number;
  let exited: () => boolean;
  let stop: () => Promise<void>;
  if (opts.group) {
    const group = opts.group;
    const p = await group.spawn({ name: "toxiproxy", command: toxiproxyBinary(), args, logFile: opts.logFile });
    pid = p.pid;
    exited = () => !p.alive;
    stop = () => group.kill("toxiproxy");
  } else {
    const log = openSync(opts.logFile, "a");
    // Marked as ours (lib/owner.ts), so a later run sweeps it should this process die without stopping it.
    const child = spawn(toxiproxyBinary(), args, { stdio: ["ignore", log, log], env: markedEnv() });
    closeSync(log);
    pid = await new Promise<number>((resolve, reject) => {
      child.once("spawn", () => resolve(child.pid!));
      child.once("error", reject);
    });
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    exited = () => child.exitCode !== null || child.signalCode !== null;
    stop = async () => {
      if (exited()) return;
      child.kill("SIGTERM");
      const kill = setTimeout(() => child.kill("SIGKILL"), 2000);
      await gone;
      clearTimeout(kill);
    };
  }
  const url = `http://127.0.0.1:${opts.port}`;
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 10_000);
  // It says nothing on stdout when it listens: its API answering is the sign.
  for (;;) {
    if (exited()) throw new Error(`Toxiproxy (pid ${pid}) exited before it answered at ${url}; its log: ${opts.logFile}`);
    try {
      const res = await fetch(`${url}/version`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) {
        const version = ((await res.json()) as { version?: string }).version ?? "unknown";
        return { url, port: opts.port, pid, version, stop };
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Toxiproxy (pid ${pid}) did not answer GET ${url}/version within ${opts.readyTimeoutMs ?? 10_000} ms; its log: ${opts.logFile}`);
    }
    await sleep(25);
  }
}
