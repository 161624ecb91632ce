// Real sockets on loopback for the proxy's conformance suite: an echo server that
// notes when bytes arrive, a client that records what it got and how it ended, and
// a server of the API (ours, or Shopify's Toxiproxy built by `fencecheck setup`)
// with the npm client pointed at it.
import net, { type AddressInfo } from "node:net";
import { join } from "node:path";
import { Toxiproxy } from "toxiproxy-node-client";
import { startProxyServer } from "../../proxy/index.ts";
import { startToxiproxy } from "../../toxiproxy/index.ts";
import { ProcessGroup } from "../../cluster/processes.ts";
import { freePort } from "../../cluster/ports.ts";
import { tempRunDir } from "../helpers.ts";

export interface Upstream {
  port: number;
  /** performance.now() of the first byte of each connection, in accept order. */
  firstByteAt: number[];
  /** Everything each connection received, in accept order. */
  received: Buffer[];
  close(): Promise<void>;
}

/** An upstream that echoes; `onConnect` may replace the echo. */
export async function startUpstream(onConnect?: (socket: net.Socket) => void): Promise<Upstream> {
  const firstByteAt: number[] = [];
  const received: Buffer[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    const i = received.length;
    received.push(Buffer.alloc(0));
    socket.on("data", (d: Buffer) => {
      if (received[i]!.length === 0) firstByteAt[i] = performance.now();
      received[i] = Buffer.concat([received[i]!, d]);
    });
    if (onConnect) onConnect(socket);
    else socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    firstByteAt,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface Ending {
  /** "end": a FIN; "reset": ECONNRESET; "close": closed without either (rare). */
  how: "end" | "reset" | "close";
  at: number;
  error?: string;
}

export class TestClient {
  data = Buffer.alloc(0);
  readonly ended: Promise<Ending>;
  private ending: Ending | undefined;
  private waiters: Array<() => void> = [];

  private constructor(readonly socket: net.Socket) {
    this.ended = new Promise<Ending>((resolve) => {
      const finish = (e: Ending): void => {
        if (this.ending) return;
        this.ending = e;
        resolve(e);
        this.wake();
      };
      socket.on("data", (d: Buffer) => {
        this.data = Buffer.concat([this.data, d]);
        this.wake();
      });
      socket.on("end", () => finish({ how: "end", at: performance.now() }));
      socket.on("error", (e: NodeJS.ErrnoException) =>
        finish({ how: e.code === "ECONNRESET" ? "reset" : "close", at: performance.now(), error: e.code ?? e.message }),
      );
      socket.on("close", () => finish({ how: "close", at: performance.now() }));
    });
  }

  static open(port: number): Promise<TestClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host: "127.0.0.1", noDelay: true });
      socket.once("connect", () => resolve(new TestClient(socket)));
      socket.once("error", reject);
    });
  }

  get done(): Ending | undefined {
    return this.ending;
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** Resolves once `n` bytes have arrived in all; rejects on timeout or an early end. */
  async waitForBytes(n: number, timeoutMs = 5000): Promise<Buffer> {
    const deadline = performance.now() + timeoutMs;
    while (this.data.length < n) {
      if (this.ending) throw new Error(`connection ended (${this.ending.how}) after ${this.data.length} of ${n} bytes`);
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`timed out with ${this.data.length} of ${n} bytes`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.data.subarray(0, n);
  }

  /** Write `msg`, wait for as many bytes back; returns elapsed ms. Consumes what it read. */
  async roundTrip(msg: string, timeoutMs = 5000): Promise<number> {
    const t0 = performance.now();
    const before = this.data.length;
    this.write(msg);
    const got = await this.waitForBytes(before + msg.length, timeoutMs);
    const elapsed = performance.now() - t0;
    if (got.subarray(before).toString() !== msg) throw new Error(`echo mismatch: ${got.subarray(before).toString()}`);
    return elapsed;
  }

  /** The ending, or undefined if the connection is still open after `ms`. */
  async endedWithin(ms: number): Promise<Ending | undefined> {
    return Promise.race([this.ended, sleep(ms).then(() => undefined)]);
  }

  destroy(): void {
    this.socket.destroy();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function portOf(listen: string): number {
  return Number(listen.slice(listen.lastIndexOf(":") + 1));
}

/** The servers of the API the conformance suite holds to one behaviour: ours, and Toxiproxy itself. */
export const TARGETS = ["fencecheck", "toxiproxy"] as const;
export type Target = (typeof TARGETS)[number];

export interface Harness {
  target: Target;
  server: { url: string; close(): Promise<void> };
  toxiproxy: Toxiproxy;
  /** Raw request; returns status, raw body text, parsed JSON (undefined unless the answer is JSON) and the content type. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; text: string; json: unknown; contentType: string | null }>;
}

/** A server of `target` on a free port of loopback. Toxiproxy not built fails, saying how to build it: a suite without it must not pass. */
async function startTarget(target: Target): Promise<Harness["server"]> {
  if (target === "fencecheck") return startProxyServer({ port: 0 });
  // A group of its own, as a run's: its reaper kills Toxiproxy should vitest die first.
  const dir = tempRunDir("fc-toxiproxy-");
  const group = new ProcessGroup(dir);
  try {
    const running = await startToxiproxy({ port: await freePort(), logFile: join(dir, "toxiproxy.log"), group });
    return { url: running.url, close: () => group.stopAll() };
  } catch (err) {
    await group.stopAll();
    // Not built fails too, saying how to build it (the suite's pretest does): a suite without it must not pass.
    throw err;
  }
}

export async function startHarness(target: Target = "fencecheck"): Promise<Harness> {
  const server = await startTarget(target);
  return {
    target,
    server,
    toxiproxy: new Toxiproxy(server.url),
    async call(method, path, body) {
      const init: RequestInit = { method };
      if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
      const res = await fetch(server.url + path, init);
      const text = await res.text();
      // Toxiproxy's errors are JSON in a text/plain body (Go's http.Error); its router's 404 is plain text.
      const json = /^[[{]/.test(text) ? (JSON.parse(text) as unknown) : undefined;
      return { status: res.status, text, json, contentType: res.headers.get("content-type") };
    },
  };
}

let names = 0;
/** Proxy names unique within a test file. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${++names}`;
}

/** A port nothing listens on right now, outside the kernel's ephemeral range (see cluster/ports.ts). */
export { freePort } from "../../cluster/ports.ts";
