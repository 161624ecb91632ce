// A lock client of the user's whose holds carry no fence, given one from Redis
// counters on the backend's nodes (--fence-source single or max-incr), taken
// right after each acquire as the Redlock clients take theirs (adapter.ts
// adapterClients wraps such an adapter's clients in it).
import { answeredNow, type AcquireRequest, type ClientContext, type Hold, type LockClient, type Outcome } from "../../clients/lock.ts";
import { RedlockNodes } from "./nodes.ts";
import { redlockFence } from "./fence-counters.ts";

export class CounterFenced implements LockClient {
  private readonly nodes: RedlockNodes;
  constructor(
    private readonly inner: LockClient,
    private readonly ctx: ClientContext,
    private readonly source: "single" | "max-incr",
  ) {
    this.nodes = new RedlockNodes(ctx.endpoints, ctx.commandTimeoutMs);
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number, request?: AcquireRequest): Promise<Outcome<Hold>> {
    const got = await this.inner.acquire(key, ttlMs, timeoutMs, request);
    if (got.type !== "ok" || got.value.fence !== null) return got;
    // Granted now: the fetch below belongs to the acquire and does not move its ok.
    const hold = answeredNow(got.value);
    // A re-entry takes its outer hold's fence: the counter is taken once per outermost hold.
    if (request?.reenter) return { type: "ok", value: { ...hold, fence: request.reenter.fence } };
    await this.nodes.ready();
    // Held by now: a fence that cannot be had is an unknown outcome (it throws).
    const all = this.ctx.endpoints.map((_, i) => i);
    const fence = await redlockFence(this.nodes, this.source, key, hold.owner, all, this.ctx.commandTimeoutMs);
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
    this.nodes.close();
  }
}
