// The lock service of a fuzz case: per key, the holds it has granted and their
// leases, where fences come from, and the queue entries of waiters. Correct by
// default (a mutex, rw lock or semaphore of N that grants only what its kind allows,
// leases counted from the moment it grants, renews and releases that check their
// owner), and broken where the Plan's defects say, each at the moment a step's dice
// allow it, so that a broken service still behaves well most of the time, as real
// broken ones do.
import type { Dice } from "./dice.ts";
import type { Defect, Plan } from "./plan.ts";

const MS = 1e6;

export interface Grant {
  owner: string;
  client: number;
  /** Exclusive: a mutex's, a reentrant lock's, an rw writer's (a semaphore's holds count, they do not exclude). */
  write: boolean;
  leaseEnd: number;
  /** A reentrant hold's count. */
  depth: number;
  /** The fence of each entry, outermost first (a reentrant lock's re-entries may get new ones). */
  fences: (number | null)[];
}

interface Entry {
  owner: string;
  /** A withdrawn waiter's entry left behind holds the queue up until then (ns). */
  until: number;
}

export class LockService {
  private readonly grants = new Map<string, Grant[]>();
  private readonly counters = new Map<string, number>();
  /** Waiting acquires' entries, in the order they came. */
  private readonly queue = new Map<string, string[]>();
  /** Entries left behind: a cancel that did not take (a defect), or one whose outcome is unknown. */
  private readonly left = new Map<string, Entry[]>();
  /** The last hold granted per key, for a waiter's `behind`. */
  private readonly lastGranted = new Map<string, string>();

  constructor(private readonly plan: Plan) {}

  private has(d: Defect): boolean {
    return this.plan.defects.includes(d);
  }

  private of(key: string): Grant[] {
    let g = this.grants.get(key);
    if (!g) this.grants.set(key, (g = []));
    return g;
  }

  /** Holds whose lease still runs at `now`. */
  live(key: string, now: number): Grant[] {
    return this.of(key).filter((g) => g.leaseEnd > now);
  }

  find(key: string, owner: string): Grant | undefined {
    return this.of(key).find((g) => g.owner === owner);
  }

  /** Whether `owner` still holds at `now`: its lease runs, or (lazy expiry) nobody has been granted since it ran out. */
  holds(key: string, owner: string, now: number): boolean {
    const g = this.find(key, owner);
    return g !== undefined && (g.leaseEnd > now || this.plan.expiry === "lazy");
  }

  /** Whether the kind lets a hold (exclusive or not) be granted now, and no entry left behind stalls the queue. */
  free(key: string, write: boolean, now: number, ignoreLeft = false): boolean {
    if (!ignoreLeft && (this.left.get(key) ?? []).some((e) => e.until > now)) return false;
    const live = this.live(key, now);
    switch (this.plan.lock) {
      case "rw":
        return write ? live.length === 0 : !live.some((g) => g.write);
      case "semaphore":
        return live.length < this.plan.permits;
      default:
        return live.length === 0;
    }
  }

  /** Whether a broken service grants although the key is not free. */
  grantsAnyway(d: Dice): boolean {
    return this.has("double-grant") && d.chance("double-grant", 40);
  }

  /** The next fence for a hold of `client`, from where the Plan's fences come from. */
  fence(key: string, client: number, d: Dice): number | null {
    const f = this.plan.fences;
    if (f === "none" || (f === "mixed" && d.chance("no-fence", 30))) return null;
    const counter = f === "per-client" ? `${key}/${client}` : key;
    const last = this.counters.get(counter) ?? 0;
    if (this.has("fence-glitch") && last > 0 && d.chance("glitch", 25)) {
      switch (d.between("glitch-how", 0, 2)) {
        case 0:
          return last; // a repeat: the counter's reply to an earlier INCR, or an INCR lost
        case 1:
          return Math.max(1, last - d.between("glitch-back", 1, 3)); // one lower fence, the counter unharmed
        default:
          this.counters.set(counter, 1); // the counter starts again (a restart without persistence)
          return 1;
      }
    }
    this.counters.set(counter, last + 1);
    return last + 1;
  }

  grant(key: string, g: Grant, now: number): void {
    // A lease that ran out is gone once another hold is granted, under lazy expiry too.
    const kept = this.of(key).filter((x) => x.leaseEnd > now && x.owner !== g.owner);
    kept.push(g);
    this.grants.set(key, kept);
    this.lastGranted.set(key, g.owner);
    this.dequeue(key, g.owner);
  }

  /** A renew at `now`; `blind` (the defect) re-takes the lock whoever holds it. */
  renew(key: string, owner: string, fence: number | null, client: number, ttlMs: number, now: number, d: Dice): boolean {
    const g = this.find(key, owner);
    if (g && this.holds(key, owner, now)) {
      g.leaseEnd = now + ttlMs * MS;
      return true;
    }
    if (!(this.has("blind-renew") && d.chance("blind", 70))) return false;
    // SET PX: the key is this owner's now, and nobody else's (an rw lock or a semaphore only adds it).
    const others = this.plan.lock === "rw" || this.plan.lock === "semaphore" ? this.of(key).filter((x) => x.owner !== owner) : [];
    const fences = g?.fences ?? [fence];
    this.grants.set(key, [...others, { owner, client, write: g?.write ?? true, leaseEnd: now + ttlMs * MS, depth: g?.depth ?? 1, fences }]);
    return true;
  }

  /** A reentrant re-entry by the holder: its count goes up; null when the hold is gone. */
  reenter(key: string, owner: string, ttlMs: number, now: number, fence: number | null): Grant | null {
    const g = this.find(key, owner);
    if (!g || !this.holds(key, owner, now)) return null;
    g.depth++;
    g.fences.push(fence);
    if (this.plan.reentryRefresh) g.leaseEnd = Math.max(g.leaseEnd, now + ttlMs * MS);
    return g;
  }

  /**
   * A release at `depth` (1: the outermost). Whether the lock was this hold's and
   * something was let go. An inner release only lowers the count, unless the
   * inner-release defect frees the lock; the unsafe-release defect deletes the key
   * whoever holds it.
   */
  release(key: string, owner: string, depth: number, now: number, d: Dice): boolean {
    const mine = this.holds(key, owner, now);
    if (this.has("unsafe-release") && d.chance("unsafe", 60) && this.plan.lock !== "rw" && this.plan.lock !== "semaphore") {
      const had = this.of(key).some((g) => g.leaseEnd > now || g.owner === owner);
      this.grants.set(key, []);
      return had;
    }
    if (!mine) return false;
    const g = this.find(key, owner)!;
    if (depth > 1 && !(this.has("inner-release-frees") && d.chance("frees", 70))) {
      g.depth = Math.max(1, g.depth - 1);
      // The outermost entry's fence stays: a release of a re-entry the service never counted (another process's) frees nothing more.
      if (g.fences.length > 1) g.fences.pop();
      return true;
    }
    this.grants.set(key, this.of(key).filter((x) => x !== g));
    return true;
  }

  /** A waiter's entry joins the queue; returns the entry it waits behind (for `behind`), or null. */
  enqueue(key: string, owner: string, now: number): string | null {
    const q = this.queue.get(key) ?? [];
    const left = (this.left.get(key) ?? []).filter((e) => e.until > now);
    const ahead = q.length > 0 ? q[q.length - 1] : left.length > 0 ? left[left.length - 1].owner : (this.live(key, now).at(-1)?.owner ?? this.lastGranted.get(key) ?? null);
    q.push(owner);
    this.queue.set(key, q);
    return ahead;
  }

  dequeue(key: string, owner: string): void {
    const q = this.queue.get(key);
    if (q) this.queue.set(key, q.filter((o) => o !== owner));
  }

  /** A withdrawn waiter's entry that stays in the queue until `until` (ns): waiters behind it are not granted. */
  leave(key: string, owner: string, until: number): void {
    this.dequeue(key, owner);
    const l = this.left.get(key) ?? [];
    l.push({ owner, until });
    this.left.set(key, l);
  }

  /** Whether `owner` is an entry left behind that still stands. */
  isLeft(key: string, owner: string, now: number): boolean {
    return (this.left.get(key) ?? []).some((e) => e.owner === owner && e.until > now);
  }

  /** The service grants an entry left behind: it is taken out of the queue's way. */
  takeLeft(key: string, owner: string): void {
    this.left.set(key, (this.left.get(key) ?? []).filter((e) => e.owner !== owner));
  }
}
