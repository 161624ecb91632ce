// What the resource tests share: a real resource process in a temp directory, its
// log read back as decisions, one such process with a client for a whole describe
// block, plain HTTP requests that bypass our client (so the tests can send what
// the client never would), and a check that a pid is gone.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { ResourceClient } from "../../clients/resource.ts";
import { startResource, type ResourceHandle } from "../../resource/index.ts";
import { newRunStart, runClock, type RunClock } from "../../store/clock.ts";
import type { ResourceDecision } from "../../store/events.ts";

export interface Running {
  handle: ResourceHandle;
  dir: string;
  logPath: string;
  /** Nanoseconds on the same run clock the resource stamps its decisions with. */
  clock: RunClock;
  decisions(): ResourceDecision[];
  logText(): string;
  /** Stops the process and removes the directory. */
  close(): Promise<void>;
}

export async function runResource(opts: { fencing: boolean; fenceReads?: boolean }): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), "fencecheck-resource-"));
  const logPath = join(dir, "resource.ndjson");
  const t0 = newRunStart();
  const handle = await startResource({ ...opts, logPath, t0, logFile: join(dir, "resource.log") });
  const logText = (): string => {
    try {
      return readFileSync(logPath, "utf8");
    } catch {
      return "";
    }
  };
  return {
    handle,
    dir,
    logPath,
    clock: runClock(t0),
    logText,
    decisions: () =>
      logText()
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as ResourceDecision),
    async close() {
      await handle.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface SharedResource {
  readonly r: Running;
  readonly client: ResourceClient;
}

/** A resource and a client for the tests of the calling describe block: started before them, stopped after. */
export function resourceForSuite(opts: { fencing: boolean; fenceReads?: boolean }): SharedResource {
  let r: Running | undefined;
  let client: ResourceClient | undefined;
  beforeAll(async () => {
    r = await runResource(opts);
    client = new ResourceClient(r.handle.url);
  });
  afterAll(async () => {
    client?.close();
    await r?.close();
  });
  const started = <T>(x: T | undefined): T => {
    if (x === undefined) throw new Error("the shared resource is only there inside the tests of its describe block");
    return x;
  };
  return {
    get r() {
      return started(r);
    },
    get client() {
      return started(client);
    },
  };
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): Record<string, unknown>;
}

/** One HTTP request on a fresh connection, exactly as given. */
export function raw(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
  opts: { chunked?: boolean } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = { ...headers };
    if (body !== undefined && !opts.chunked) h["Content-Length"] = String(Buffer.byteLength(body));
    const req = request(`${url}${path}`, { method, headers: h, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, unknown> });
      });
      res.on("error", reject);
    });
    // The server may answer and close before it has read all of a body it refuses.
    req.on("error", reject);
    if (body !== undefined && opts.chunked) {
      // Several chunks without a length, so the size is only known while reading.
      const b = Buffer.from(body);
      for (let i = 0; i < b.length; i += 8192) req.write(b.subarray(i, i + 8192));
      req.end();
    } else req.end(body);
  });
}

/** True once the process is gone (or a zombie: dead, only not yet reaped by init). */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state === "Z" || state === "X";
  } catch {
    return true;
  }
}

export async function waitUntil(what: string, cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function metricValue(text: string, name: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`no metric ${name} in:\n${text}`);
  return Number(line.slice(name.length + 1));
}
