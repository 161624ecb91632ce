// The example adapter with a bug people ship: release deletes the key without
// checking that this hold still owns it. A holder whose lease ran out (a pause
// longer than the TTL) then deletes the NEXT holder's lock on its way out, and a
// third client takes it while the second still believes it holds it.
//
//   npx fencecheck test --client ./examples/broken-release-adapter.ts --nemesis pause --fence off
//
// finds mutex-violation: the checker sees two holds whose leases were both
// certainly running at once.
import { defineAdapter, type ClientContext, type Hold, type Outcome } from "fencecheck/adapter";
import { ExampleRedisLock } from "./redis-lock-adapter.ts";

class BrokenReleaseLock extends ExampleRedisLock {
  override async release(key: string, _hold: Hold): Promise<Outcome<{ released: boolean }>> {
    if (this.redis.status === "wait") await this.redis.connect();
    const deleted = await this.redis.del(key);
    return { type: "ok", value: { released: deleted === 1 } };
  }
}

export default defineAdapter({
  describe: "the example adapter, releasing with a plain DEL (no owner check)",
  backends: ["redis"],
  fences: true,
  create: (ctx: ClientContext) => new BrokenReleaseLock(ctx),
});
