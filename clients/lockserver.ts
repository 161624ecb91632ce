// The client of our own lock server (cluster/lockserver/): one TCP connection
// per logical client, made at the first request and again after it is lost.
// The server queues an acquire (FIFO) for up to its wait, so the client waits
// in the server's queue rather than polling; the fence is the grant's.
//
// A request never written (no connection answered a ping) certainly did nothing:
// `fail` "unavailable". A request written whose reply never came (timed out, connection lost)
// may have been granted: an unknown outcome, thrown. A refusal is a `fail`.
import { createConnection, type Socket } from "node:net";
import { UnknownOutcome, type ClientContext, type Endpoint, type Hold, type LockClient, type Outcome } from "./lock.ts";

type Reply = { id: number; ok: true; fence?: number; ttlMs?: number; released?: boolean } | { id: number; ok: false; error: string; message?: string };

interface Waiting {
  resolve: (r: Reply) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/** Refused before the request was sent: the service did nothing. */
class NotSent extends Error {}

export class LockServerLock implements LockClient {
  readonly renews = true;
  private socket: Socket | null = null;
  private connecting: Promise<Socket> | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 0;
  private holds = 0;
  private readonly endpoint: Endpoint;
  private readonly ownerPrefix: string;
  private readonly commandTimeoutMs: number;

  constructor(ctx: ClientContext) {
    this.endpoint = ctx.endpoints[0];
    this.ownerPrefix = ctx.ownerPrefix;
    this.commandTimeoutMs = ctx.commandTimeoutMs;
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const owner = `${this.ownerPrefix}-h${++this.holds}`;
    // The server answers a queued acquire when its wait ends: the reply is due then, plus a command's time.
    const r = await this.ask({ op: "acquire", key, owner, ttlMs, waitMs: timeoutMs }, timeoutMs + this.commandTimeoutMs);
    return r.type === "ok" ? { type: "ok", value: { owner, fence: r.fence ?? null, ttlMs } } : r;
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const r = await this.ask({ op: "renew", key, owner: hold.owner, ttlMs }, this.commandTimeoutMs);
    return r.type === "ok" ? { type: "ok", value: { ttlMs } } : r;
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const r = await this.ask({ op: "release", key, owner: hold.owner }, this.commandTimeoutMs);
    return r.type === "ok" ? { type: "ok", value: { released: true } } : r;
  }

  async close(): Promise<void> {
    this.socket?.destroy();
    this.socket = null;
  }

  /** The server's grant or refusal; a request never sent is refused here. */
  private async ask(request: Record<string, unknown>, timeoutMs: number): Promise<{ type: "ok"; fence?: number } | { type: "fail"; error: string }> {
    let socket: Socket;
    try {
      socket = await this.connect();
    } catch {
      return { type: "fail", error: "unavailable" };
    }
    const reply = await this.send(socket, request, timeoutMs);
    return reply.ok ? { type: "ok", fence: reply.fence } : { type: "fail", error: reply.error };
  }

  private send(socket: Socket, request: Record<string, unknown>, timeoutMs: number): Promise<Reply> {
    const id = ++this.nextId;
    return new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new UnknownOutcome("timeout", `no reply from ${this.endpoint.name} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, { resolve, reject, timer });
      socket.write(JSON.stringify({ id, ...request }) + "\n");
    }).then((r) => {
      // A reply the server could not read is our own bug, not the lock's answer.
      if (!r.ok && r.error === "bad-request") throw new Error(`${this.endpoint.name} could not read a request: ${r.message}`);
      return r;
    });
  }

  /**
   * The connection, made (again) if it is gone. It counts as made once the server
   * answered a ping on it: through the fault proxy a connection is accepted even
   * while the server is down or frozen, and a request written on it would then be
   * in doubt; a ping unanswered leaves nothing in doubt.
   */
  private connect(): Promise<Socket> {
    if (this.socket && !this.socket.destroyed) return Promise.resolve(this.socket);
    this.connecting ??= new Promise<Socket>((resolve, reject) => {
      const socket = createConnection({ host: this.endpoint.host, port: this.endpoint.port });
      socket.setNoDelay(true);
      let ready = false;
      const timer = setTimeout(() => socket.destroy(), this.commandTimeoutMs);
      socket.once("connect", () => socket.write(JSON.stringify({ id: 0, op: "ping" }) + "\n"));
      let buffer = "";
      socket.on("data", (d) => {
        buffer += d.toString("utf8");
        for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
          const reply = JSON.parse(buffer.slice(0, nl)) as Reply;
          buffer = buffer.slice(nl + 1);
          if (!ready) {
            if (reply.id !== 0 || !reply.ok) continue;
            ready = true;
            clearTimeout(timer);
            this.socket = socket;
            resolve(socket);
            continue;
          }
          const w = this.waiting.get(reply.id);
          if (!w) continue; // its request already timed out: an unknown outcome, recorded so
          this.waiting.delete(reply.id);
          clearTimeout(w.timer);
          w.resolve(reply);
        }
      });
      socket.on("error", () => {});
      socket.once("close", () => {
        clearTimeout(timer);
        if (this.socket === socket) this.socket = null;
        if (!ready) return reject(new NotSent(`no answer to a ping from ${this.endpoint.name} within ${this.commandTimeoutMs} ms`));
        // Every request written on it is in doubt: the server may have done it.
        for (const [id, w] of this.waiting) {
          clearTimeout(w.timer);
          w.reject(new UnknownOutcome("connection-lost", `the connection to ${this.endpoint.name} closed before its reply`));
          this.waiting.delete(id);
        }
      });
    }).finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }
}
