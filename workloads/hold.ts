// The pieces of a hold every lock workload shares: acquire, the optional renew
// watchdog, release. A hold belongs to the process that acquired it; once that
// process is retired (an unknown outcome), the hold is abandoned to its lease.
import type { AcquireRequest, Hold, LockClient } from "../clients/lock.ts";
import type { LogicalClient } from "./client.ts";
import type { WorkloadOptions } from "./options.ts";
import { leaseMs } from "../store/events.ts";

export interface HeldLock {
  key: string;
  hold: Hold;
  /** A reentrant hold's depth: 1 for the outermost, one more per re-entry (absent: not reentrant). */
  depth?: number;
  /** The process that acquired it. */
  process: number;
  watchdog: Watchdog | null;
  /** Why its client knows it lost the lock (a ZooKeeper session that expired), or null. */
  lost: () => string | null;
  /**
   * Until when (the run's clock, ns) the history proves it held: the invoke of its
   * acquire, or of its last renew answered ok, plus that operation's TTL, as the
   * checker reads a hold's certain spans (docs/history-format.md, mutex-violation).
   * Infinity for a lease of no stated length.
   */
  certainUntil: number;
}

/** A granted ttl_ms as leaseMs takes it: NaN where the lock said none. */
const granted = (ttl: unknown): number => (typeof ttl === "number" ? ttl : NaN);

/** The end (the run's clock, ns) of a certain span that an operation answered ok starts: its invoke plus its lease (ms). */
const spanEnd = (invoked: number | undefined, lease: number): number => (invoked === undefined ? -Infinity : Number.isFinite(lease) ? invoked + lease * 1e6 : Infinity);

/**
 * Whether a re-entry of `outer` invoked now would enter a hold the history proves
 * valid. A lock that renews itself (a watchdog inside the library, a session's
 * heartbeats) records no renews, so once its acquire's invoke plus the TTL has
 * passed nothing in the history shows that it still holds, and a re-entry granted
 * then is a reentrancy-violation by the history's rule, whatever the lock did.
 * The workload does not ask for one: what it would show is the recording, not the
 * lock (a Redisson or Hazelcast run with no faults was INVALID for it).
 */
export const certainlyHeld = (c: LogicalClient, h: HeldLock): boolean => stillHeld(c, h) && c.now() < h.certainUntil;

/** The hold's identity as it appears in invoke values of writes, renews and releases. */
export const holdRef = (h: Hold): { owner: string; fence: number | null } => ({ owner: h.owner, fence: h.fence });

/**
 * What an acquire asks for beyond a mutex, as the client gets it (`request`) and as
 * the history records it (`fields`, in the invoke and the ok: docs/history-format.md,
 * lock kinds). `outer`: the hold a reentrant acquire enters again.
 */
export interface Asked {
  request?: AcquireRequest;
  fields?: { mode?: "read" | "write"; depth?: number };
  outer?: HeldLock;
}

export async function acquire(c: LogicalClient, lock: LockClient, key: string, o: WorkloadOptions, asked: Asked = {}): Promise<HeldLock | null> {
  let hold: Hold | null = null;
  const fields = asked.fields ?? {};
  // A re-entry is asked for only while its outer hold is certainly held when its turn comes (a renew may be ahead of it): see certainlyHeld.
  const outer = asked.outer;
  const done = await c.op(
    "acquire",
    key,
    { ttl_ms: o.ttlMs, ...fields },
    async () => {
      const r = await lock.acquire(key, o.ttlMs, o.acquireTimeoutMs, asked.request);
      if (r.type === "fail") return r;
      hold = r.value;
      return { type: "ok", value: { owner: hold.owner, fence: hold.fence, ttl_ms: hold.ttlMs, ...fields, ...hold.extra }, at: hold.answeredAt };
    },
    outer ? () => certainlyHeld(c, outer) : undefined,
  );
  if (done.type !== "ok" || !hold) return null;
  // Assigned in the closure above, which TypeScript does not follow.
  const mine = hold as Hold;
  const held: HeldLock = { key, hold: mine, process: c.process, watchdog: null, lost: () => lock.lost?.(mine) ?? null, certainUntil: spanEnd(done.invoked, leaseMs(o.ttlMs, granted(mine.ttlMs))) };
  if (fields.depth !== undefined) held.depth = fields.depth;
  // A lock with no lease to renew, or one that renews itself, gets no watchdog; a
  // re-entry has its outer hold's.
  if (o.renew && lock.renews !== false && !asked.outer) held.watchdog = new Watchdog(c, lock, held, o.ttlMs);
  return held;
}

/** Still ours to use: the process is the one that acquired, and neither a renew nor the client said otherwise. */
export const stillHeld = (c: LogicalClient, h: HeldLock): boolean => c.process === h.process && !h.watchdog?.lost && h.lost() === null;

export async function release(c: LogicalClient, lock: LockClient, h: HeldLock): Promise<void> {
  await h.watchdog?.stop();
  // A hold the library said was lost (a notice) is let go of as its user would: not released.
  if (c.process !== h.process || lock.toldLost?.(h.hold)) return;
  await c.op("release", h.key, h.depth === undefined ? holdRef(h.hold) : { ...holdRef(h.hold), depth: h.depth }, async () => {
    const r = await lock.release(h.key, h.hold);
    return r.type === "ok" ? { type: "ok", value: { released: r.value.released, ...(r.value.lost ? { lost: r.value.lost } : {}) } } : r;
  });
}

/**
 * Renews the lease every ttl/3 and says when a renew failed. It runs in the
 * client's own process, so a SIGSTOP freezes it too: that is the point of K1.
 */
export class Watchdog {
  lost = false;
  private timer: NodeJS.Timeout;
  private inflight: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(private readonly c: LogicalClient, private readonly lock: LockClient, private readonly h: HeldLock, private readonly ttlMs: number) {
    this.timer = setInterval(() => {
      if (!this.stopped && !this.lost) this.inflight = this.renew();
    }, Math.max(1, Math.floor(ttlMs / 3)));
  }

  private async renew(): Promise<void> {
    const done = await this.c.op(
      "renew",
      this.h.key,
      { ...holdRef(this.h.hold), ttl_ms: this.ttlMs },
      async () => {
        const r = await this.lock.renew(this.h.key, this.h.hold, this.ttlMs);
        return r.type === "ok" ? { type: "ok", value: { ttl_ms: r.value.ttlMs } } : r;
      },
      () => !this.stopped && this.c.process === this.h.process,
    );
    if (done.type === "ok") this.h.certainUntil = Math.max(this.h.certainUntil, spanEnd(done.invoked, leaseMs(this.ttlMs, granted(done.value?.ttl_ms))));
    else if (!this.stopped) this.lost = true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.inflight;
  }
}
