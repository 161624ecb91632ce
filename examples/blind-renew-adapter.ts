// The example adapter with another bug people ship: the renew is a bare
// `PEXPIRE key ttl`, which extends whatever lease the key has, this hold's or
// the next holder's. A holder frozen past its lease (a GC pause) wakes, renews,
// and is told ok although another client took the lock meanwhile: it goes on
// as holder, and so does the other.
//
//   npx fencecheck test --client ./examples/blind-renew-adapter.ts --nemesis pause --fence off
//
// finds lost-lock-unnoticed (a renew ok after another hold was granted) and
// mutex-violation from the late renew's ok on: the lapse before it was not
// certainly held by anyone (docs/anomalies.md).
import { defineAdapter, type ClientContext, type Hold, type Outcome } from "fencecheck/adapter";
import { ExampleRedisLock } from "./redis-lock-adapter.ts";

class BlindRenewLock extends ExampleRedisLock {
  override async renew(key: string, _hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    if (this.redis.status === "wait") await this.redis.connect();
    // 1 when the key exists, whoever holds it; 0 when it has expired and nobody took it.
    const extended = await this.redis.pexpire(key, ttlMs);
    return extended === 1 ? { type: "ok", value: { ttlMs } } : { type: "fail", error: "not-owner" };
  }
}

export default defineAdapter({
  describe: "the example adapter, renewing with a bare PEXPIRE (no owner check)",
  backends: ["redis"],
  fences: true,
  create: (ctx: ClientContext) => new BlindRenewLock(ctx),
});
