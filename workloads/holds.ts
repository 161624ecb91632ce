// One hold of each lock kind (--lock), as the fenced-write workload takes it and
// as the users of such a lock do: a mutex's holder writes; an rw lock's reader
// reads the resource with its fence and its writer writes; a semaphore's holders
// write side by side, each with its own fence; a reentrant hold enters again to a
// random depth, writing at each, and releases back down. With --cancel-rate a share
// of the waits are withdrawn before their timeout (withdrawal).
import type { AcquireRequest, LockKind } from "../clients/lock.ts";
import { sleep } from "../lib/index.ts";
import { acquire, certainlyHeld, release, stillHeld, type HeldLock } from "./hold.ts";
import { pauseAt, readResource, writeResource } from "./steps.ts";
import type { ClientEnv } from "./workload.ts";

/** One hold on `key`; `n` counts the client's writes (their data), and the new count is returned. */
export type HoldOnce = (env: ClientEnv, key: string, n: number) => Promise<number>;

/**
 * For a --cancel-rate share of acquires that wait, a signal that fires at a random
 * moment of the wait (a tenth to nine tenths of the timeout): the waiter gives up,
 * as a user's AbortSignal or the library's own cancel would.
 */
function withdrawal(env: ClientEnv): { signal?: AbortSignal; done(): void } {
  const o = env.opts;
  if (o.cancelRate <= 0 || o.acquireTimeoutMs <= 0 || env.rng.next() >= o.cancelRate) return { done: () => {} };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), env.rng.between(0.1, 0.9) * o.acquireTimeoutMs);
  return { signal: controller.signal, done: () => clearTimeout(timer) };
}

/** An acquire of the kind's request, with a withdrawal where --cancel-rate draws one. */
async function take(env: ClientEnv, key: string, request: AcquireRequest, fields: { mode?: "read" | "write"; depth?: number }, outer?: HeldLock): Promise<HeldLock | null> {
  const w = withdrawal(env);
  const asked: AcquireRequest = w.signal ? { ...request, signal: w.signal } : request;
  try {
    // A mutex's acquire asks nothing: its request stays absent, as before lock kinds.
    return await acquire(env.client, env.lock, key, env.opts, { ...(Object.keys(asked).length > 0 ? { request: asked } : {}), fields, ...(outer ? { outer } : {}) });
  } finally {
    w.done();
  }
}

/** The holder's part after acquiring: the pause, the work, and its writes. */
async function writeAll(env: ClientEnv, held: HeldLock, n: number): Promise<number> {
  const { client: c, resource, opts: o } = env;
  for (let i = 0; i < o.writesPerHold && stillHeld(c, held); i++) await writeResource(c, resource, held, `${held.hold.owner}#${++n}`);
  return n;
}

/** A mutex's hold, and a semaphore's (the permits asked for; the resource counts the holders by their fences). */
const exclusive: HoldOnce = async (env, key, n) => {
  const { client: c, lock, opts: o } = env;
  const held = await take(env, key, o.lock.kind === "semaphore" ? { permits: o.lock.permits } : {}, {});
  if (!held) return n;
  await pauseAt("acquire", c, o);
  await sleep(o.workMs);
  n = await writeAll(env, held, n);
  await pauseAt("release", c, o);
  await release(c, lock, held);
  return n;
};

/** An rw lock's hold: a reader reads the resource with its fence (which a later writer's refuses), a writer writes. */
const rw: HoldOnce = async (env, key, n) => {
  const { client: c, lock, resource, opts: o } = env;
  const mode = env.rng.next() < o.lock.readRatio ? "read" : "write";
  const held = await take(env, key, { mode }, { mode });
  if (!held) return n;
  await pauseAt("acquire", c, o);
  await sleep(o.workMs);
  if (mode === "write") n = await writeAll(env, held, n);
  else for (let i = 0; i < o.writesPerHold && stillHeld(c, held); i++) if ((await readResource(c, resource, held, { ...o, fenceReads: true })).type !== "ok") break;
  await pauseAt("release", c, o);
  await release(c, lock, held);
  return n;
};

/**
 * A reentrant hold: the outermost acquire, then re-entries down to a random depth
 * (the same owner, the count one higher each), a write at each depth, and the
 * releases back up; the watchdog (--renew) renews the outer hold throughout.
 * --pause-at reenter pauses after each re-entry is granted (a re-entry's lease
 * refresh then decides whether the hold outlives the pause: R2); --pause-at
 * release before the outer release, after the inner ones.
 */
const reentrant: HoldOnce = async (env, key, n) => {
  const { client: c, lock, opts: o } = env;
  const outer = await take(env, key, {}, { depth: 1 });
  if (!outer) return n;
  const depth = env.rng.int(1, o.lock.maxDepth);
  const chain: HeldLock[] = [outer];
  await pauseAt("acquire", c, o);
  await sleep(o.workMs);
  n = await writeAll(env, outer, n);
  for (let d = 2; d <= depth && certainlyHeld(c, outer); d++) {
    const inner = await take(env, key, { reenter: chain[chain.length - 1].hold }, { depth: d }, outer);
    if (!inner) break;
    chain.push(inner);
    await pauseAt("reenter", c, o);
    await sleep(o.workMs / depth);
    n = await writeAll(env, inner, n);
  }
  // Innermost first, as a user's nested try/finally blocks release.
  for (let i = chain.length - 1; i > 0; i--) await releaseInner(env, chain[i], outer);
  // The outer block's own work after its inner blocks returned: where an inner release that freed the lock shows (R1).
  await pauseAt("release", c, o);
  await release(c, lock, outer);
  return n;
};

/** A re-entry's release: the outer hold's watchdog keeps running; nothing is released once the outer hold is known lost. */
async function releaseInner(env: ClientEnv, inner: HeldLock, outer: HeldLock): Promise<void> {
  if (!stillHeld(env.client, outer)) return;
  await release(env.client, env.lock, inner);
}

export const HOLDS: Record<LockKind, HoldOnce> = { mutex: exclusive, semaphore: exclusive, rw, reentrant };
