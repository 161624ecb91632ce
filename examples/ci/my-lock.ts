// The adapter locks.json names (`"client": "./my-lock.ts"`): your lock, as
// fencecheck drives it. It lives in your repository next to your lock code and
// imports your own lock library (here ioredis, whatever version your
// package.json has); fencecheck loads it from where it lives. Replace the
// bodies with calls to your lock. The rules (docs/adapters.md): return `fail`
// only when the lock service certainly did not do the thing; when you cannot
// know (a timeout, a dropped connection), throw.
import { Redis } from "ioredis";
import { defineAdapter, REDIS_LOCK_SCRIPTS, type ClientContext, type Hold, type LockClient, type Outcome } from "fencecheck/adapter";

export class MyLock implements LockClient {
  private readonly redis: Redis;
  private holds = 0;

  constructor(private readonly ctx: ClientContext) {
    // The server as this client reaches it: through fencecheck's fault proxy.
    const { host, port } = ctx.endpoints[0];
    this.redis = new Redis({
      host,
      port,
      // Too late is an unknown outcome; no retries, no offline queue: a command is sent once.
      commandTimeout: ctx.commandTimeoutMs,
      connectTimeout: ctx.commandTimeoutMs,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      lazyConnect: true,
      retryStrategy: () => 100,
    });
    this.redis.on("error", () => {});
  }

  private async connected(): Promise<void> {
    if (this.redis.status === "wait") await this.redis.connect();
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const owner = `${this.ctx.ownerPrefix}-h${++this.holds}`;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.connected();
      const fence = (await this.redis.eval(REDIS_LOCK_SCRIPTS.acquire, 2, key, `fence:{${key}}`, owner, ttlMs)) as number | null;
      if (fence !== null) return { type: "ok", value: { owner, fence: Number(fence), ttlMs } };
      if (Date.now() >= deadline) return { type: "fail", error: "timeout" };
      await new Promise((r) => setTimeout(r, this.ctx.rng.between(2, 10)));
    }
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    await this.connected();
    const ok = (await this.redis.eval(REDIS_LOCK_SCRIPTS.renew, 1, key, hold.owner, ttlMs)) as number;
    return ok === 1 ? { type: "ok", value: { ttlMs } } : { type: "fail", error: "not-owner" };
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    await this.connected();
    const deleted = (await this.redis.eval(REDIS_LOCK_SCRIPTS.release, 1, key, hold.owner)) as number;
    return { type: "ok", value: { released: deleted === 1 } };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

export default defineAdapter({
  describe: "our Redis lock: SET NX PX with a fence from INCR, owner-checked renew and release",
  backends: ["redis"],
  fences: true,
  create: (ctx) => new MyLock(ctx),
});
