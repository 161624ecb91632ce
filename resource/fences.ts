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

export interface KeyState {
  value: unknown;
  maxWritten: number | null;
  maxSeen: number | null;
}

export interface Judgement {
  accepted: boolean;
  /** `max_before` of the decision: the highest fence accepted on the key so far. */
  maxBefore: number | null;
  /** The key's state if the decision is committed (the same state when refused). */
  next: KeyState;
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
    const fresh = (s.maxWritten === null || fence > s.maxWritten) && (s.maxSeen === null || fence >= s.maxSeen);
    const accepted = fresh || !this.fencing;
    const next = accepted ? { value: data, maxWritten: atLeast(s.maxWritten, fence), maxSeen: atLeast(s.maxSeen, fence) } : s;
    return { accepted, maxBefore: s.maxSeen, next };
  }

  judgeRead(key: string, fence: number | null): Judgement {
    const s = this.get(key);
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
