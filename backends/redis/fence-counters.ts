// Where a Redlock hold's fence comes from. Redlock issues none; what people do
// instead is the point of F2. One implementation for every Redlock client.
//
// - none: no fence (null). A fencing resource can then only refuse the write.
// - max-incr: INCR fence:{key} on every node that granted, take the largest.
//   The common recipe, and unsafe: the counters of different majorities move
//   apart under partitions, so a later hold can get a lower fence (F2).
// - single: INCR fence:{key} on the first node (redis-1) only. Monotonic while
//   that node lives and keeps its data, but a single point of failure: while it
//   is unreachable no hold gets a fence, and if it restarts without persistence
//   its counter starts again (F1).
import { fenceKey } from "./client.ts";
import type { FenceSource } from "../../clients/lock.ts";
import { waitFor, type RedlockNodes } from "./nodes.ts";
import { RedlockUnknown } from "./proof.ts";

/** The node `single` counts on. */
export const SINGLE_FENCE_NODE = 0;

/**
 * The fence of a hold just granted on `granted` (node indexes). The lock is held
 * by then, so a fence that cannot be had is an unknown outcome, not a failure:
 * the acquire did happen.
 */
export async function redlockFence(nodes: RedlockNodes, source: FenceSource, key: string, owner: string, granted: readonly number[], waitMs: number): Promise<number | null> {
  if (source === "none") return null;
  const targets = source === "single" ? [SINGLE_FENCE_NODE] : granted;
  const calls = targets.map((i) => nodes.send(i, "fence", owner, (r) => r.incr(fenceKey(key)), () => true));
  // max-incr takes what arrives in time, as the recipe does; single has only its one node to wait for.
  if (source === "single") await Promise.all(calls.map((c) => c.done));
  else await waitFor(calls, waitMs);
  const values: number[] = [];
  for (const c of calls) if (c.vote === "yes") values.push(Number(await c.reply));
  if (values.length === 0) {
    const on = targets.map((i) => nodes.name(i)).join(", ");
    throw new RedlockUnknown("no-fence", `the lock was granted but INCR ${fenceKey(key)} on ${on} did not answer: a hold without its fence`);
  }
  return Math.max(...values);
}
