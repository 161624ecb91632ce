// A counting semaphore done wrong, kept on purpose: the count of holders is read
// (GET) and then, in a second round trip, raised (INCR) when it was below N. Two
// clients that read N-1 before either raises it both take the last permit. The
// gap between the two round trips (a slow client; gapMs) widens the window the
// scenario needs. The count is one key with a lease (PEXPIRE at each grant and
// renew) so that permits of holders that died come back; it knows no owners, so
// a renew refreshes every holder's lease and a late release can give back a
// permit of the next holders: more of the same defect. The fence is an INCR of
// one counter taken after the grant, so a fencing resource can show what the
// extra holder did.
import type { AcquireRequest, ClientContext, Hold, LockClient, Outcome } from "../../clients/lock.ts";
import { fenceKey, lazyRedis } from "./client.ts";
import { pollUntilCancelled } from "../../clients/poll-cancel.ts";
import { sleep } from "../../lib/index.ts";

/** KEYS: count. 1 when a permit was given back; a count that is gone (its lease ran out) is not taken below 0. */
const RELEASE = `
if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then
  redis.call('DECR', KEYS[1])
  return 1
end
return 0`;

export class RedisRacySemaphore implements LockClient {
  private readonly node: ReturnType<typeof lazyRedis>;
  /** Names of its holds: the count knows no owners, the history does. */
  private holds = 0;

  /** gapMs: the pause between a try's GET and its INCR. */
  constructor(private readonly ctx: ClientContext, private readonly gapMs: number) {
    this.node = lazyRedis(ctx.endpoints[0], ctx.commandTimeoutMs);
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number, request?: AcquireRequest): Promise<Outcome<Hold>> {
    const permits = request?.permits ?? 1;
    const owner = `${this.ctx.ownerPrefix}-h${++this.holds}`;
    return pollUntilCancelled(
      async () => {
        await this.node.ready();
        if (Number((await this.node.redis.get(key)) ?? 0) >= permits) return null;
        if (this.gapMs > 0) await sleep(this.gapMs);
        // The defect: nothing checks the count again. From here the permit is taken,
        // so a command that fails is an unknown outcome (it throws).
        const replies = await this.node.redis.multi().incr(key).pexpire(key, ttlMs).exec();
        const refused = replies?.find(([err]) => err)?.[0];
        if (!replies || refused) throw refused ?? new Error(`the INCR of ${key} was not done`);
        const fence = await this.node.redis.incr(fenceKey(key));
        return { type: "ok", value: { owner, fence, ttlMs } };
      },
      timeoutMs,
      this.ctx.rng,
      request?.signal,
    );
  }

  async renew(key: string, _hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    await this.node.ready();
    const ok = await this.node.redis.pexpire(key, ttlMs);
    return ok === 1 ? { type: "ok", value: { ttlMs } } : { type: "fail", error: "not-owner" };
  }

  async release(key: string, _hold: Hold): Promise<Outcome<{ released: boolean }>> {
    await this.node.ready();
    const given = Number(await this.node.redis.eval(RELEASE, 1, key));
    return { type: "ok", value: { released: given === 1 } };
  }

  async close(): Promise<void> {
    this.node.redis.disconnect();
  }
}
