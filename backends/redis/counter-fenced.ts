// Redis' fence counter for a lock client of the user's whose holds carry no fence
// (--fence-source single or max-incr): INCR fence:{key} on the first node or on
// every node, as the Redlock clients take theirs (clients/counter-fenced.ts takes
// it after each grant).
import type { ClientContext, LockClient } from "../../clients/lock.ts";
import { CounterFenced as Fenced, type FenceFetch } from "../../clients/counter-fenced.ts";
import { RedlockNodes } from "./nodes.ts";
import { redlockFence } from "./fence-counters.ts";

function redisCounter(ctx: ClientContext, source: "single" | "max-incr"): FenceFetch {
  const nodes = new RedlockNodes(ctx.endpoints, ctx.commandTimeoutMs);
  const all = ctx.endpoints.map((_, i) => i);
  return {
    async next(key, owner) {
      await nodes.ready();
      // redlockFence never answers null for single or max-incr: it throws (unknown) when no node answered.
      return (await redlockFence(nodes, source, key, owner, all, ctx.commandTimeoutMs)) as number;
    },
    close: () => nodes.close(),
  };
}

/** `inner`'s holds, fenced from Redis counters. */
export class CounterFenced extends Fenced {
  constructor(inner: LockClient, ctx: ClientContext, source: "single" | "max-incr") {
    super(inner, source, redisCounter(ctx, source));
  }
}
