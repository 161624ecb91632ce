// An example of a lock client adapter: your lock, in one file, tested by
// fencecheck as it tests its own clients.
//
//   npx fencecheck test --client ./examples/redis-lock-adapter.ts --nemesis pause
//   (in fencecheck's own checkout: npm run test:jepsen -- --client ...)
//
// The module's default export says what the lock is and makes one client per
// logical client. A client has four methods, and one rule about failures:
//
//   acquire(key, ttlMs, timeoutMs)  keep trying for up to timeoutMs; resolve
//       { type: "ok", value: { owner, fence, ttlMs } } with an owner unique to
//       this hold and the fencing token your lock issued (null if it issues none),
//       or { type: "fail", error: "timeout" } when it certainly did not get it.
//   renew(key, hold, ttlMs)   extend the lease: ok, or fail "not-owner".
//   release(key, hold)        give it up: ok { released: true|false }.
//   close()                   drop the connections.
//
// The rule: return `fail` only when the lock service certainly did not do the
// thing. When you cannot know (a timeout, a lost connection), THROW: fencecheck
// records the operation as `info` (its outcome unknown), which is what a
// Jepsen-style history must say. Never retry a command whose first attempt may
// have taken effect, and never queue commands while disconnected.
//
// This one is the single-Redis lock of the Redis documentation, written with
// ioredis: SET NX PX and a fence from INCR in one script, owner-checked renew and
// release. Copy it and put your own lock's calls in its place.
//
// In your repository, this file sits next to your lock code and imports your own
// copy of your lock library: fencecheck loads it from where it lives.
import { Redis } from "ioredis";
import { defineAdapter, REDIS_LOCK_SCRIPTS, type ClientContext, type Hold, type LockClient, type Outcome } from "fencecheck/adapter";

// The scripts of fencecheck's own Redis client (backends/redis/scripts.ts): SET NX PX and
// INCR of the fence counter in one script, so the counter moves only when a hold
// is granted; renew and release compare the owner first, in the same script, so
// a holder whose lease ran out cannot touch the next holder's key.
const { acquire: ACQUIRE, renew: RENEW, release: RELEASE } = REDIS_LOCK_SCRIPTS;

export class ExampleRedisLock implements LockClient {
  protected readonly redis: Redis;
  private holds = 0;

  constructor(private readonly ctx: ClientContext) {
    // ctx.endpoints are the servers as this client reaches them: through
    // fencecheck's fault proxy, so partitions and latency reach your client too.
    const { host, port } = ctx.endpoints[0];
    this.redis = new Redis({
      host,
      port,
      // An answer later than this is an unknown outcome (ioredis rejects, we throw).
      commandTimeout: ctx.commandTimeoutMs,
      connectTimeout: ctx.commandTimeoutMs,
      // No retries and no offline queue: a command is sent once, or fails at once.
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      // The ready check stays on: without it ioredis 5 can call a connection "ready"
      // that closed as it opened (a proxy accepting while the server restarts) and
      // never reconnect.
      lazyConnect: true,
      retryStrategy: () => 100,
    });
    // Errors reach the command that meets them; unhandled, this event would crash the worker.
    this.redis.on("error", () => {});
  }

  private async connected(): Promise<void> {
    if (this.redis.status === "wait") await this.redis.connect();
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    // Unique per hold across the run: ctx.ownerPrefix names the logical client.
    const owner = `${this.ctx.ownerPrefix}-h${++this.holds}`;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.connected();
      const fence = (await this.redis.eval(ACQUIRE, 2, key, `fence:{${key}}`, owner, ttlMs)) as number | null;
      if (fence !== null) return { type: "ok", value: { owner, fence: Number(fence), ttlMs } };
      if (Date.now() >= deadline) return { type: "fail", error: "timeout" };
      // ctx.rng is seeded from --seed: the same seed retries at the same moments.
      await new Promise((r) => setTimeout(r, this.ctx.rng.between(2, 10)));
    }
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    await this.connected();
    const ok = (await this.redis.eval(RENEW, 1, key, hold.owner, ttlMs)) as number;
    return ok === 1 ? { type: "ok", value: { ttlMs } } : { type: "fail", error: "not-owner" };
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    await this.connected();
    const deleted = (await this.redis.eval(RELEASE, 1, key, hold.owner)) as number;
    return { type: "ok", value: { released: deleted === 1 } };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

export default defineAdapter({
  describe: "example adapter: SET NX PX with an INCR fence in one script, owner-checked renew and release (ioredis)",
  // ctx.endpoints holds one Redis for --backend redis.
  backends: ["redis"],
  // Its holds carry the fence INCR issued.
  fences: true,
  create: (ctx: ClientContext) => new ExampleRedisLock(ctx),
});
