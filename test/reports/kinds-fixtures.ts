// Hand-written format 2 histories of the lock kinds beyond the mutex, for the
// report's tests (and for looking at their pages): an rw lock's readers and a
// writer, a semaphore of 2 with a third holder let in, a reentrant hold that
// re-enters to depth 3, and withdrawn waits with a queue stalled behind one.
import { History } from "../checker/build.ts";

/** An acquire of a kind: `fields` go into the invoke and the ok. */
function acquireKind(h: History, p: number, key: string, at: [number, number], owner: string, fence: number | null, fields: Record<string, unknown>, ttl = 1000) {
  return h.op(p, "acquire", key, at, { ttl_ms: ttl, ...fields }, "ok", { owner, fence, ttl_ms: ttl, ...fields });
}

function release(h: History, p: number, key: string, at: [number, number], owner: string, fence: number, fields: Record<string, unknown> = {}) {
  return h.op(p, "release", key, at, { owner, fence, ...fields }, "ok", { released: true });
}

/** Two readers together, then a writer granted while the second still reads: rw-violation. */
export function rwHistory(): History {
  const h = new History({ format: 2, lock: "rw", client: "x" });
  acquireKind(h, 1, "k", [0, 10], "r1", 1, { mode: "read" });
  acquireKind(h, 2, "k", [100, 110], "r2", 2, { mode: "read" });
  h.read(1, "k", [200, 205], "r1", 1, "v0");
  release(h, 1, "k", [500, 505], "r1", 1);
  acquireKind(h, 3, "k", [600, 610], "w1", 3, { mode: "write" });
  h.write(3, "k", [700, 705], "w1", 3, "w1#1");
  release(h, 2, "k", [800, 805], "r2", 2);
  release(h, 3, "k", [900, 905], "w1", 3);
  return h;
}

/** A semaphore of `permits`; three holds, the third granted while the first two certainly hold. */
export function semaphoreHistory(permits: number): History {
  const h = new History({ format: 2, lock: "semaphore", permits, client: "x" });
  acquireKind(h, 1, "k", [0, 10], "a", 1, {});
  acquireKind(h, 2, "k", [100, 110], "b", 2, {});
  acquireKind(h, 3, "k", [300, 310], "c", 3, {});
  release(h, 1, "k", [600, 605], "a", 1);
  release(h, 2, "k", [700, 705], "b", 2);
  release(h, 3, "k", [900, 905], "c", 3);
  return h;
}

/** One hold re-entered to depth 2, then 3, released back down; another owner after it. */
export function reentrantHistory(): History {
  const h = new History({ format: 2, lock: "reentrant", fence_on_reentry: "same", client: "x" });
  acquireKind(h, 1, "k", [0, 10], "a", 1, {});
  acquireKind(h, 1, "k", [150, 160], "a", 1, { depth: 2 });
  acquireKind(h, 1, "k", [300, 310], "a", 1, { depth: 3 });
  release(h, 1, "k", [500, 510], "a", 1, { depth: 3 });
  release(h, 1, "k", [650, 660], "a", 1, { depth: 2 });
  release(h, 1, "k", [850, 860], "a", 1);
  acquireKind(h, 2, "k", [20, 900], "b", 2, {});
  release(h, 2, "k", [1000, 1010], "b", 2);
  return h;
}

/**
 * A mutex's queue: a waiter withdrawn for certain, one whose withdrawal is unknown,
 * and, once the holder has gone, a waiter left waiting 5 s on a free lock behind
 * a dead entry: a stuck-lock liveness finding.
 */
export function cancelHistory(): History {
  const h = new History({ format: 2, lock: "mutex", client: "x" });
  acquireKind(h, 1, "k", [0, 10], "a", 1, {}, 500);
  h.op(2, "acquire", "k", [20, 200], { ttl_ms: 500 }, "fail", { owner: "c2" }, "cancelled");
  h.op(3, "acquire", "k", [30, 250], { ttl_ms: 500 }, "info", undefined, "cancel-unknown");
  release(h, 1, "k", [300, 305], "a", 1);
  h.op(4, "acquire", "k", [400, 5400], { ttl_ms: 500 }, "fail", { behind: "dead-entry" }, "timeout");
  return h;
}
