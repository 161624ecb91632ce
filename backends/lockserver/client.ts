// The client of one of our lock servers (backends/lockserver/): one connection
// per logical client (lockserver-connection.ts). The server queues an acquire
// (FIFO) for up to its wait, so the client waits in the server's queue rather
// than polling; the fence is the grant's.
import { LockServerConnection, type ServerAnswer } from "./connection.ts";
import type { ClientContext, Hold, LockClient, Outcome } from "../../clients/lock.ts";

export class LockServerLock implements LockClient {
  readonly renews = true;
  private readonly server: LockServerConnection;
  private holds = 0;
  private readonly ownerPrefix: string;
  private readonly commandTimeoutMs: number;

  constructor(ctx: ClientContext) {
    this.server = new LockServerConnection(ctx.endpoints[0], ctx.commandTimeoutMs);
    this.ownerPrefix = ctx.ownerPrefix;
    this.commandTimeoutMs = ctx.commandTimeoutMs;
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const owner = `${this.ownerPrefix}-h${++this.holds}`;
    const began = performance.now();
    let queuedMs: number | null = null;
    // The server answers a queued acquire when its wait ends: the reply is due then, plus a command's time.
    const r = await this.server.ask({ op: "acquire", key, owner, ttlMs, waitMs: timeoutMs }, timeoutMs + this.commandTimeoutMs, {
      queued: () => (queuedMs = elapsedMs(began)),
    });
    if (r.type !== "ok") return refused(r);
    // When its place in the FIFO queue was certainly taken (the fairness count's arrival): the queued word, or the grant itself.
    return { type: "ok", value: { owner, fence: r.fence ?? null, ttlMs, extra: { queued_ms: queuedMs ?? elapsedMs(began) } } };
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const r = await this.server.ask({ op: "renew", key, owner: hold.owner, ttlMs }, this.commandTimeoutMs);
    return r.type === "ok" ? { type: "ok", value: { ttlMs } } : refused(r);
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const r = await this.server.ask({ op: "release", key, owner: hold.owner }, this.commandTimeoutMs);
    return r.type === "ok" ? { type: "ok", value: { released: true } } : refused(r);
  }

  async close(): Promise<void> {
    this.server.close();
  }
}

const elapsedMs = (since: number): number => Math.ceil((performance.now() - since) * 1000) / 1000;

const refused = (r: ServerAnswer & { type: "fail" }): { type: "fail"; error: string } => ({ type: "fail", error: r.error });
