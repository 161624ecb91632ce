// `import type { LockClient, ... } from "fencecheck/adapter"`: what a lock client
// adapter of a team's own is written against (docs/own-lock.md, and
// examples/redis-lock-adapter.ts for a whole one). The adapter's default export
// is a LockAdapter; its clients are LockClients; every operation ends in an
// Outcome, `fail` only when the lock service certainly did not do the thing (an
// adapter throws when it cannot know, and the operation is recorded as `info`;
// `throw new UnknownOutcome("lease-state-unknown")` chooses the info's error).
//
// Nothing here loads a lock library: the adapter brings its own, resolved from
// where the adapter lives, so a team tests the copy and version it ships.
import type { LockAdapter } from "../clients/lock.ts";

export type { Hold, Outcome, LockClient, LockAdapter, ClientContext, ClientOptions, Endpoint, AcquireRequest, LockKinds } from "../clients/lock.ts";
export type { Rng } from "../lib/random.ts";
export { pollAcquire, UnknownOutcome } from "../clients/lock.ts";
export { REDIS_LOCK_SCRIPTS } from "../backends/redis/scripts.ts";

/** The adapter as it is, typed: `export default defineAdapter({ describe, backends, fences, create })`. */
export function defineAdapter(adapter: LockAdapter): LockAdapter {
  return adapter;
}
