// Start the proxy as a child process and wait until it listens. A process of its
// own keeps the proxy's sockets off the test runner's event loop, so a paused or
// busy runner does not also pause the network it is testing.
import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import type { Socket } from "node:net";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

export interface SpawnedProxyServer {
  url: string;
  port: number;
  pid: number;
  /** SIGTERM, then SIGKILL if it has not exited within a few seconds. */
  stop(): Promise<void>;
}

const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));
// `--import tsx` is resolved from the working directory; the project root has it.
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const READY_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;

export async function spawnProxyServer(opts: { port?: number; logFile?: string } = {}): Promise<SpawnedProxyServer> {
  const logFd = opts.logFile !== undefined ? openSync(resolve(opts.logFile), "a") : undefined;
  const args = ["--import", "tsx", MAIN, "--port", String(opts.port ?? 0), "--host", "127.0.0.1", "--watch-stdin"];
  // stdin is the lifeline: the child exits when this process goes and the pipe closes.
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["pipe", "pipe", logFd ?? "pipe"] });
  if (logFd !== undefined) closeSync(logFd);
  child.stdin?.on("error", () => {});

  let stderrTail = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderrTail = (stderrTail + d.toString("utf8")).slice(-4000);
  });
  const exited = new Promise<void>((res) => child.once("exit", () => res()));
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  const port = await new Promise<number>((res, rej) => {
    let out = "";
    let settled = false;
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      const where = opts.logFile ? ` (see ${opts.logFile})` : stderrTail ? `: ${stderrTail.trim()}` : "";
      rej(new Error(`proxy server ${why}${where}`));
    };
    const timer = setTimeout(() => fail(`did not report its port within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
    child.once("error", (e) => fail(`could not start: ${e.message}`));
    child.once("exit", (code, signal) => fail(`exited before listening (code ${code}, signal ${signal})`));
    child.stdout?.on("data", function onData(d: Buffer) {
      out += d.toString("utf8");
      const nl = out.indexOf("\n");
      if (nl < 0) return;
      child.stdout?.off("data", onData);
      try {
        const line = JSON.parse(out.slice(0, nl)) as { port?: unknown };
        if (typeof line.port !== "number") throw new Error("no port");
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        res(line.port);
      } catch {
        fail(`printed ${JSON.stringify(out.slice(0, nl))} instead of {"port":N}`);
      }
    });
  });
  // Keep draining stdout; and let this process exit without waiting for the child
  // (it follows us out when stdin closes).
  child.stdout?.resume();
  for (const s of [child.stdin, child.stdout, child.stderr]) (s as unknown as Socket | null)?.unref?.();
  child.unref();

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    async stop(): Promise<void> {
      if (hasExited) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
