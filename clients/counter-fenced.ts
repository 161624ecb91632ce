// A lock client whose holds carry no fence, given one from a counter on the
// backend's servers (--fence-source single or max-incr), taken right after each
// acquire as the Redlock clients take theirs (adapter.ts adapterClients wraps
// such an adapter's clients in it). What the counter is belongs to the backend:
// Redis' INCR fence:{key} (backends/redis/counter-fenced.ts), Postgres' counter
// row (backends/postgres/counter-fenced.ts).
import { answeredNow, type AcquireRequest, type Hold, type LockClient, type Outcome } from "./lock.ts";

/** One backend's counter: the next fence of `key`, for the hold `owner` just granted. It throws when none can be had. */
export interface FenceFetch {
  next(key: string, owner: string): Promise<number>;
  close(): void | Promise<void>;
}

export class CounterFenced implements LockClient {
  constructor(
    private readonly inner: LockClient,
    private readonly source: "single" | "max-incr",
    private readonly counter: FenceFetch,
  ) {}

  async acquire(key: string, ttlMs: number, timeoutMs: number, request?: AcquireRequest): Promise<Outcome<Hold>> {
    const got = await this.inner.acquire(key, ttlMs, timeoutMs, request);
    if (got.type !== "ok" || got.value.fence !== null) return got;
    // Granted now: the fetch below belongs to the acquire and does not move its ok.
    const hold = answeredNow(got.value);
    // A re-entry takes its outer hold's fence: the counter is taken once per outermost hold.
    if (request?.reenter) return { type: "ok", value: { ...hold, fence: request.reenter.fence } };
    // Held by now: a fence that cannot be had is an unknown outcome (it throws).
    const fence = await this.counter.next(key, hold.owner);
    return { type: "ok", value: { ...hold, fence, extra: { ...hold.extra, fence_source: this.source } } };
  }

  renew(key: string, hold: Hold, ttlMs: number) {
    return this.inner.renew(key, hold, ttlMs);
  }

  release(key: string, hold: Hold) {
    return this.inner.release(key, hold);
  }

  async close(): Promise<void> {
    await this.inner.close();
    await this.counter.close();
  }
}
