// The npm package `redlock` 5.0.0-beta.2, the library people use, over every node.
// It decides as soon as a quorum has answered and never checks that the lease
// is still valid when it does (K5): a lock it returns may already have expired,
// which its `validity_ms` (expiration - now) then shows as negative. Its own
// retries are off (retryCount 0): this client retries within --acquire-timeout,
// so each attempt's calls are known and a failed one can be judged honestly.
import Redlock, { ExecutionError, type Lock } from "redlock";
import type { Redis } from "ioredis";
import { NpmRedlock } from "./npm-redlock.ts";
import type { RedlockClientOptions } from "../redis/nodes.ts";

const ONCE = { retryCount: 0 };

export class NodeRedlock extends NpmRedlock<Lock> {
  constructor(opts: RedlockClientOptions) {
    super(opts, (clients) => {
      // Typed as ioredis clients for the library; they are recorders in front of them.
      const redlock = new Redlock(clients as unknown as Redis[], { ...ONCE, driftFactor: 0.01 });
      const s = redlock.scripts;
      return {
        name: "redlock",
        scripts: { grant: s.acquireScript.value, extend: s.extendScript.value, release: s.releaseScript.value },
        lock: (key, ttlMs) => redlock.acquire([key], ttlMs, ONCE),
        extend: (lock, ttlMs) => redlock.extend(lock, ttlMs, ONCE),
        unlock: async (lock) => {
          await redlock.release(lock, ONCE);
        },
        isLockError: (e) => e instanceof ExecutionError,
      };
    });
  }
}
