// The resource's state and the one rule it enforces. Deciding is kept apart from
// committing: the server first decides, then appends the decision to the log, and
// only then commits, so the state never holds a change the log does not show.
//
// Two fences are kept per key. `maxSeen` is the highest fence of any accepted
// request: it is what resource.ndjson records as `max_before` and what a read
// reports. `maxWritten` is the highest fence of an accepted write. Without
// --fence-reads only writes carry fences into the state, the two are equal, and
// the write rule below is exactly docs/history-format.md's `fence > max_before`.
//
// With --fence-reads a read advances `maxSeen` (Kleppmann's cure for a lost update
// under fencing, scenario C1 of docs/experiments.md). The hold that read with fence f must still be
// able to write with f, so a write needs `f > maxWritten` (an equal fence written
// twice is still refused: two holds with one fence) and `f >= maxSeen` (no hold
// newer than f has read or written). A read is refused only by a lower fence, as
// one hold may read many times.

//
// Format 2's other lock kinds have rules of their own (docs/history-format.md):
// a semaphore of N permits accepts a write while fewer than N fences higher than
// its own have been accepted on the key (a mutex is N = 1), so it keeps the N
// highest; an rw lock accepts a read at or above the highest written fence, and a
// write only above every fence accepted, read or written.

/** Which rule the resource enforces: a mutex's (reentrant too), an rw lock's, or a semaphore's of `permits`. */
export interface Rule {
  kind: "mutex" | "rw" | "semaphore";
  permits: number;
}

export const MUTEX_RULE: Rule = { kind: "mutex", permits: 1 };

export interface KeyState {
  value: unknown;
  maxWritten: number | null;
  maxSeen: number | null;
  /** A semaphore's: the highest fences accepted, distinct, highest first, at most `permits` of them. */
  top?: readonly number[];
}

export interface Judgement {
  accepted: boolean;
  /** `max_before` of the decision: the highest fence accepted on the key so far. */
  maxBefore: number | null;
  /** The key's state if the decision is committed (the same state when refused). */
  next: KeyState;
  /** A semaphore's: how many higher fences it had seen accepted (at most `permits`). */
  higher?: number;
}

const EMPTY: KeyState = { value: null, maxWritten: null, maxSeen: null };

function atLeast(current: number | null, fence: number): number {
  return current === null ? fence : Math.max(current, fence);
}

export class FencedStore {
  private readonly keys = new Map<string, KeyState>();

  constructor(
    /** Refuse stale fences; when off, everything is accepted and only recorded. */
    readonly fencing: boolean,
    /** Reads that carry a fence advance the key's fence like writes do. */
    readonly fenceReads: boolean,
    readonly rule: Rule = MUTEX_RULE,
  ) {}

  get(key: string): KeyState {
    return this.keys.get(key) ?? EMPTY;
  }

  /** `fence` null: the hold has no token; a fencing resource cannot tell it from a stale one and refuses it. */
  judgeWrite(key: string, fence: number | null, data: unknown): Judgement {
    const s = this.get(key);
    if (fence === null) {
      const accepted = !this.fencing;
      return { accepted, maxBefore: s.maxSeen, next: accepted ? { ...s, value: data } : s };
    }
    if (this.rule.kind === "semaphore") return this.judgeSemaphoreWrite(s, fence, data);
    if (this.rule.kind === "rw") {
      const accepted = s.maxSeen === null || fence > s.maxSeen || !this.fencing;
      const next = accepted ? { value: data, maxWritten: atLeast(s.maxWritten, fence), maxSeen: atLeast(s.maxSeen, fence) } : s;
      return { accepted, maxBefore: s.maxSeen, next };
    }
    const fresh = (s.maxWritten === null || fence > s.maxWritten) && (s.maxSeen === null || fence >= s.maxSeen);
    const accepted = fresh || !this.fencing;
    const next = accepted ? { value: data, maxWritten: atLeast(s.maxWritten, fence), maxSeen: atLeast(s.maxSeen, fence) } : s;
    return { accepted, maxBefore: s.maxSeen, next };
  }

  /** A semaphore's write: accepted while fewer than `permits` higher fences have been. */
  private judgeSemaphoreWrite(s: KeyState, fence: number, data: unknown): Judgement {
    const top = s.top ?? [];
    let higher = 0;
    while (higher < top.length && top[higher] > fence) higher++;
    const accepted = higher < this.rule.permits || !this.fencing;
    if (!accepted) return { accepted, maxBefore: s.maxSeen, next: s, higher };
    const kept = top[higher] === fence ? top : [...top.slice(0, higher), fence, ...top.slice(higher)].slice(0, this.rule.permits);
    return { accepted, maxBefore: s.maxSeen, next: { value: data, maxWritten: atLeast(s.maxWritten, fence), maxSeen: atLeast(s.maxSeen, fence), top: kept }, higher };
  }

  judgeRead(key: string, fence: number | null): Judgement {
    const s = this.get(key);
    if (this.rule.kind === "rw") {
      // An rw lock's reader always shows its fence: a read is refused below the highest written one.
      if (fence === null) return { accepted: !this.fencing, maxBefore: s.maxSeen, next: s };
      const accepted = s.maxWritten === null || fence >= s.maxWritten || !this.fencing;
      return { accepted, maxBefore: s.maxSeen, next: accepted ? { ...s, maxSeen: atLeast(s.maxSeen, fence) } : s };
    }
    if (fence === null || !this.fenceReads) return { accepted: true, maxBefore: s.maxSeen, next: s };
    const fresh = s.maxSeen === null || fence >= s.maxSeen;
    const accepted = fresh || !this.fencing;
    const next = accepted ? { ...s, maxSeen: atLeast(s.maxSeen, fence) } : s;
    return { accepted, maxBefore: s.maxSeen, next };
  }

  commit(key: string, next: KeyState): void {
    if (next !== this.keys.get(key) && next !== EMPTY) this.keys.set(key, next);
  }
}
