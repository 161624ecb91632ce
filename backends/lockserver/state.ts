// The lock server's state, as the seed on lock servers describes it: per
// resource (lock key) a holder, the end of its lease, a FIFO queue of waiters
// and a fence counter that counts every grant. Pure: the time is passed in (the
// server's monotonic clock, in ms), and every call says whom to answer what, so
// the unit tests drive it without a socket or a timer.
//
// A lease that ran out is gone at the next call: `expire` runs first in every
// request and whenever the server's timer for nextDeadline() fires, and grants
// the lock to the head of its queue, so a waiter never loses its turn to a
// newcomer that arrived after the lease ran out.

/** A change of state that persistence writes down (and a restart replays), in the order made. */
export type Change =
  | { t: "grant"; key: string; owner: string; fence: number; ttlMs: number }
  | { t: "renew"; key: string; owner: string; ttlMs: number }
  | { t: "release"; key: string; owner: string }
  | { t: "fence"; key: string; fence: number };

export type Reply = { ok: true; fence?: number; ttlMs?: number; released?: boolean } | { ok: false; error: LockError } | Queued;

/**
 * Not an answer but a word on the way: the acquire took its place in the queue
 * (`ahead`: how many wait before it). Its answer comes later. It tells the
 * client when its place was certainly taken, which a fairness count needs.
 */
export interface Queued {
  queued: true;
  ahead: number;
}

/** The refusals: the server certainly did not do what was asked ("withdrawn": a wait its owner released before it was granted). */
export type LockError = "busy" | "timeout" | "not-owner" | "already-holder" | "withdrawn";

/** Whom to answer (the server's handle on a request still waiting) and what. */
export interface Answer<W> {
  to: W;
  reply: Reply;
}

interface Waiter<W> {
  to: W;
  owner: string;
  ttlMs: number;
  /** When its wait ends unanswered (server's clock, ms). */
  until: number;
}

interface Resource<W> {
  holder: string | null;
  leaseUntil: number;
  /** The fence of the last grant; the next grant's is one more. */
  fence: number;
  queue: Array<Waiter<W>>;
}

export class LockTable<W> {
  private readonly resources = new Map<string, Resource<W>>();

  /** `record` is told of each change before its answer leaves (persistence: an append and an fsync). */
  constructor(private readonly record: (c: Change) => void = () => {}) {}

  private resource(key: string): Resource<W> {
    let r = this.resources.get(key);
    if (!r) this.resources.set(key, (r = { holder: null, leaseUntil: 0, fence: 0, queue: [] }));
    return r;
  }

  private grant(key: string, r: Resource<W>, owner: string, ttlMs: number, now: number): Reply {
    r.holder = owner;
    r.leaseUntil = now + ttlMs;
    r.fence++;
    this.record({ t: "grant", key, owner, fence: r.fence, ttlMs });
    return { ok: true, fence: r.fence, ttlMs };
  }

  /** Hand a free lock to the queue's head (a waiter whose wait is over was already answered). */
  private grantNext(key: string, r: Resource<W>, now: number, out: Array<Answer<W>>): void {
    const next = r.queue.shift();
    if (next) out.push({ to: next.to, reply: this.grant(key, r, next.owner, next.ttlMs, now) });
  }

  /** Waits that ran out answered `timeout`, then leases that ran out, each freed lock granted to its queue's head. */
  expire(now: number): Array<Answer<W>> {
    const out: Array<Answer<W>> = [];
    for (const [key, r] of this.resources) {
      const late = r.queue.filter((w) => w.until <= now);
      if (late.length) {
        r.queue = r.queue.filter((w) => w.until > now);
        for (const w of late) out.push({ to: w.to, reply: { ok: false, error: "timeout" } });
      }
      if (r.holder !== null && r.leaseUntil <= now) {
        r.holder = null;
        this.grantNext(key, r, now, out);
      }
    }
    return out;
  }

  /** Granted now if free; else queued for up to waitMs (0: refused `busy` at once). */
  acquire(to: W, key: string, owner: string, ttlMs: number, waitMs: number, now: number): Array<Answer<W>> {
    const out = this.expire(now);
    const r = this.resource(key);
    if (r.holder === null && r.queue.length === 0) out.push({ to, reply: this.grant(key, r, owner, ttlMs, now) });
    else if (r.holder === owner || r.queue.some((w) => w.owner === owner)) out.push({ to, reply: { ok: false, error: "already-holder" } });
    else if (waitMs <= 0) out.push({ to, reply: { ok: false, error: "busy" } });
    else {
      r.queue.push({ to, owner, ttlMs, until: now + waitMs });
      out.push({ to, reply: { queued: true, ahead: r.queue.length - 1 } });
    }
    return out;
  }

  /** Only the holder, while its lease runs: the lease then ends ttlMs from now. */
  renew(to: W, key: string, owner: string, ttlMs: number, now: number): Array<Answer<W>> {
    const out = this.expire(now);
    const r = this.resources.get(key);
    if (!r || r.holder !== owner) out.push({ to, reply: { ok: false, error: "not-owner" } });
    else {
      r.leaseUntil = now + ttlMs;
      this.record({ t: "renew", key, owner, ttlMs });
      out.push({ to, reply: { ok: true, ttlMs } });
    }
    return out;
  }

  /**
   * The holder lets go, and the lock goes to the queue's head at once. An owner
   * still waiting withdraws its wait instead (its acquire is answered
   * "withdrawn", the release `released: false`): the majority manager releases
   * on every server, including those where it still waits.
   */
  release(to: W, key: string, owner: string, now: number): Array<Answer<W>> {
    const out = this.expire(now);
    const r = this.resources.get(key);
    const waiting = r?.queue.find((w) => w.owner === owner);
    if (r && waiting) {
      r.queue = r.queue.filter((w) => w !== waiting);
      out.push({ to: waiting.to, reply: { ok: false, error: "withdrawn" } }, { to, reply: { ok: true, released: false } });
    } else if (!r || r.holder !== owner) out.push({ to, reply: { ok: false, error: "not-owner" } });
    else {
      r.holder = null;
      this.record({ t: "release", key, owner });
      out.push({ to, reply: { ok: true, released: true } });
      this.grantNext(key, r, now, out);
    }
    return out;
  }

  /**
   * The next number of the key's fence counter, without a grant: the counter
   * every grant on this server also counts, so the numbers it gives only rise
   * (while the server keeps them). The majority manager's --fence-source single.
   */
  nextFence(to: W, key: string): Array<Answer<W>> {
    const r = this.resource(key);
    r.fence++;
    this.record({ t: "fence", key, fence: r.fence });
    return [{ to, reply: { ok: true, fence: r.fence } }];
  }

  /** Forget the waits of a connection that closed: nobody is there to be granted the lock. */
  dropWaiters(gone: (to: W) => boolean): void {
    for (const r of this.resources.values()) r.queue = r.queue.filter((w) => !gone(w.to));
  }

  /** The next time something runs out (a wait or a lease), or null. */
  nextDeadline(): number | null {
    let next: number | null = null;
    const consider = (t: number): void => void (next = next === null ? t : Math.min(next, t));
    for (const r of this.resources.values()) {
      if (r.holder !== null) consider(r.leaseUntil);
      for (const w of r.queue) consider(w.until);
    }
    return next;
  }

  /**
   * Replay one change of a journal at start. A lease replayed runs its whole TTL
   * from `now`: the monotonic clock of the process that granted it is gone, and
   * a holder may have had at most that long, so the lease is never shorter than
   * the holder was told (and may be longer: a restart can keep a lock unavailable).
   */
  replay(c: Change, now: number): void {
    const r = this.resource(c.key);
    if (c.t === "fence") r.fence = Math.max(r.fence, c.fence);
    else if (c.t === "grant") {
      r.holder = c.owner;
      r.fence = Math.max(r.fence, c.fence);
      r.leaseUntil = now + c.ttlMs;
    } else if (c.t === "renew" && r.holder === c.owner) r.leaseUntil = now + c.ttlMs;
    else if (c.t === "release" && r.holder === c.owner) r.holder = null;
  }

  /** One resource as it is now, for tests and for a curious operator. */
  inspect(key: string): { holder: string | null; leaseUntil: number; fence: number; waiting: string[] } | null {
    const r = this.resources.get(key);
    return r ? { holder: r.holder, leaseUntil: r.leaseUntil, fence: r.fence, waiting: r.queue.map((w) => w.owner) } : null;
  }
}
