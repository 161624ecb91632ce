// A `fencecheck test` run from an experiment: a child process like any user's run,
// stored under the experiment's directory, with its results and history read back.
import { spawn } from "node:child_process";
import { readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { EXIT, entryArgs } from "../lib/index.ts";
import { backendOfClient } from "../backends/index.ts";
import { BadInput } from "../lib/index.ts";
import type { Results } from "../store/events.ts";

export interface JepsenRun {
  code: number;
  runDir: string;
  results: Results;
}

/** The backend that runs a shipped client. */
export function backendOf(client: string): string {
  const b = backendOfClient(client);
  if (!b) throw new BadInput(`no backend runs --client ${client}`);
  return b.name;
}

/**
 * One `fencecheck test` run; resolves once it is stored and checked. `signal` passes an
 * interruption on as the SIGINT a terminal would send: the run heals, tears down
 * and stores what it has, and this still waits for that. `started` hears of its
 * pid (to watch its processes).
 */
export function jepsen(args: string[], signal?: AbortSignal, started?: (pid: number) => void): Promise<JepsenRun> {
  return new Promise((resolve, reject) => {
    // In our working directory, the user's: the paths in `args` (--store) are relative to it.
    const child = spawn(process.execPath, [...entryArgs("cli/fencecheck"), "test", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    if (child.pid !== undefined) started?.(child.pid);
    const interrupt = (): void => void child.kill("SIGINT");
    if (signal?.aborted) interrupt();
    signal?.addEventListener("abort", interrupt, { once: true });
    child.once("exit", () => signal?.removeEventListener("abort", interrupt));
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => {
      const dir = /^Run directory: (.+)$/m.exec(out)?.[1];
      if (!dir) return reject(new Error(`fencecheck test ${args.join(" ")} exited ${code} without a run directory:\n${out}${err.slice(-2000)}`));
      // Thrown in this handler it would crash the experiment instead of failing the run.
      try {
        const runDir = realpathSync(dir.trim());
        resolve({ code: code ?? EXIT.crash, runDir, results: JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")) as Results });
      } catch (e) {
        reject(e);
      }
    });
  });
}
