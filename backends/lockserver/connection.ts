// One connection to one of our lock servers (backends/lockserver/), shared by the
// single-server client and the majority manager: made at the first request and
// again after it is lost; replies matched to requests by id, in any order.
//
// A request never written (no connection answered a ping) certainly did nothing:
// a `fail` "unavailable". A request written whose reply never came (timed out,
// connection lost) may have been done: UnknownOutcome, thrown. A refusal is a
// `fail` with the server's error.
import { createConnection, type Socket } from "node:net";
import { UnknownOutcome, type Endpoint } from "../../clients/lock.ts";

type Answer = { id: number; ok: true; fence?: number; ttlMs?: number; released?: boolean } | { id: number; ok: false; error: string; message?: string };
/** An answer, or a queued word on the way to one. */
type Reply = Answer | { id: number; queued: true; ahead: number; ok?: undefined };

/** A server's answer, and on which connection it came (a release answered on the acquire's connection ran after it). */
export type ServerAnswer = { type: "ok"; fence?: number; released?: boolean; via: number } | { type: "fail"; error: string; via: number };

/** `via` of a request never sent. */
export const NEVER_SENT = -1;

/** What a caller may be told while its request is under way. */
export interface AskHooks {
  /** It went out, on connection number `via`. */
  sent?: (via: number) => void;
  /** The server queued it (an acquire that must wait): its place is taken. */
  queued?: () => void;
}

interface Waiting {
  queued?: () => void;
  resolve: (r: Answer) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class LockServerConnection {
  private socket: Socket | null = null;
  private connecting: Promise<Socket> | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 0;
  /** Connections made so far: the number of the current one. */
  private made = 0;

  constructor(
    readonly endpoint: Endpoint,
    private readonly commandTimeoutMs: number,
  ) {}

  get name(): string {
    return this.endpoint.name;
  }

  /**
   * The server's answer, or a fail "unavailable" if it was never sent;
   * UnknownOutcome if sent and not answered within timeoutMs.
   */
  async ask(request: Record<string, unknown>, timeoutMs: number, hooks: AskHooks = {}): Promise<ServerAnswer> {
    let socket: Socket;
    try {
      socket = await this.connect();
    } catch {
      return { type: "fail", error: "unavailable", via: NEVER_SENT };
    }
    const via = this.made;
    hooks.sent?.(via);
    const reply = await this.send(socket, request, timeoutMs, hooks.queued);
    return reply.ok ? { type: "ok", fence: reply.fence, released: reply.released, via } : { type: "fail", error: reply.error, via };
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }

  private send(socket: Socket, request: Record<string, unknown>, timeoutMs: number, queued?: () => void): Promise<Answer> {
    const id = ++this.nextId;
    return new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new UnknownOutcome("timeout", `no reply from ${this.name} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, { queued, resolve, reject, timer });
      socket.write(JSON.stringify({ id, ...request }) + "\n");
    }).then((r) => {
      // A reply the server could not read is our own bug, not the lock's answer.
      if (!r.ok && r.error === "bad-request") throw new Error(`${this.name} could not read a request: ${r.message}`);
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
            this.made++;
            resolve(socket);
            continue;
          }
          const w = this.waiting.get(reply.id);
          if (!w) continue; // its request already timed out: an unknown outcome, recorded so
          if (reply.ok === undefined) {
            w.queued?.();
            continue;
          }
          this.waiting.delete(reply.id);
          clearTimeout(w.timer);
          w.resolve(reply);
        }
      });
      socket.on("error", () => {});
      socket.once("close", () => {
        clearTimeout(timer);
        if (this.socket === socket) this.socket = null;
        if (!ready) return reject(new Error(`no answer to a ping from ${this.name} within ${this.commandTimeoutMs} ms`));
        // Every request written on it is in doubt: the server may have done it.
        for (const [id, w] of this.waiting) {
          clearTimeout(w.timer);
          w.reject(new UnknownOutcome("connection-lost", `the connection to ${this.name} closed before its reply`));
          this.waiting.delete(id);
        }
      });
    }).finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }
}
