// Wing and Gong's linearizability search, with Lowe's memoisation as Porcupine
// and Knossos use it: walk the history's calls and returns in time order, try to
// linearize each pending call in the model, and back up when a return is reached
// whose operation has not taken effect yet; remember every (set of operations
// taken effect, model state) reached so that no configuration is explored twice.
//
// Three things make it fit histories of hundreds of thousands of operations per
// key. The set of operations taken effect is remembered not as a bitset of the
// whole history but as (the highest operation taken effect, the few below it still
// pending), which names the same set exactly: only operations concurrent with the
// search's frontier are ever pending below it. An operation whose outcome is
// unknown has no return, so it never forces anything, and once the model says it
// can no longer matter it is left out of what is remembered. And the list of calls
// and returns is built as the search reaches it, so a search that stops early (a
// violation near the start) costs little.
import { Memo } from "./memo.ts";

/** The model the search checks against. States are non-negative numbers (exact below 2^53). */
export interface SearchModel {
  readonly init: number;
  /** The state after `op` in `state`, or -1 when `op` cannot take effect there (or, if optional, would change nothing). */
  step(state: number, op: number): number;
  /** Whether an optional `op` can no longer change any state reachable from `state`. */
  settled(state: number, op: number, decided: Uint8Array): boolean;
  /**
   * Called once as a search starts with the operations taken effect (1) so far,
   * which the search keeps up to date: a model whose states leave out what these
   * tell (which holds have been released) reads them in `step`. The memo then
   * still names each configuration exactly, since it remembers this set.
   */
  watch?(decided: Uint8Array): void;
}

/** A history of one object: operations in call order, each with its call and return position in real time. */
export interface SearchHistory {
  readonly length: number;
  /** Position of the call and of the return in one total order of the history's events, ascending calls; return -1: optional (unknown outcome). */
  readonly call: Float64Array;
  readonly ret: Float64Array;
}

export interface Deepest {
  /** How many operations had taken effect, the state there, the last to take effect (-1: none), and the operation whose return the search could not pass. */
  taken: number;
  state: number;
  last: number;
  blocked: number;
}

export type SearchResult =
  | { kind: "linearizable"; steps: number; memo: number }
  | { kind: "unknown"; steps: number; memo: number; reason: string }
  | { kind: "not-linearizable"; steps: number; memo: number; deepest: Deepest };

export interface SearchLimits {
  /** performance.now() after which the search gives up. */
  deadline: number;
  /** Memo entries kept; 0: no memo at all. */
  maxMemo: number;
  /** Steps after which the search gives up (unknown). */
  maxSteps?: number;
}

export function search(h: SearchHistory, model: SearchModel, limits: SearchLimits): SearchResult {
  const n = h.length;
  const list = new Entries(h);
  const { next, entryOp, isCall, callEntry } = list;
  const decided = new Uint8Array(n);
  model.watch?.(decided);
  const stackOp = new Int32Array(n);
  const stackState = new Float64Array(n);
  const stackTop = new Int32Array(n);
  let depth = 0;
  let state = model.init;
  let top = -1;
  const memo = limits.maxMemo > 0 ? new Memo(limits.maxMemo) : null;
  const pending = new Int32Array(n);
  const maxSteps = limits.maxSteps ?? Infinity;
  let steps = 0;
  let deepest: Deepest = { taken: -1, state: model.init, last: -1, blocked: -1 };

  // The operations below `upTo` not yet taken effect (that can still matter), in order.
  const pendingBelow = (upTo: number, s: number): number => {
    let count = 0;
    for (let e = next[HEAD]; e !== TAIL; e = next[e]) {
      if (!isCall[e]) continue;
      const op = entryOp[e];
      if (op > upTo) break;
      if (h.ret[op] < 0 && model.settled(s, op, decided)) continue;
      pending[count++] = op;
    }
    return count;
  };

  let entry = list.first();
  while (entry !== TAIL) {
    if ((++steps & 1023) === 0 && (performance.now() > limits.deadline || steps > maxSteps)) {
      const reason = steps > maxSteps ? `${maxSteps} steps were not enough` : "the time budget ran out";
      return { kind: "unknown", steps, memo: memo?.size ?? 0, reason };
    }
    if (isCall[entry]) {
      const op = entryOp[entry];
      const s = model.step(state, op);
      if (s >= 0) {
        list.lift(op);
        decided[op] = 1;
        const t = op > top ? op : top;
        if (!memo || memo.add(t, s, pending, pendingBelow(t, s))) {
          stackOp[depth] = op;
          stackState[depth] = state;
          stackTop[depth] = top;
          depth++;
          state = s;
          top = t;
          entry = list.first();
          continue;
        }
        decided[op] = 0;
        list.unlift(op);
      }
      entry = list.after(entry);
      continue;
    }
    // A return whose operation has not taken effect: back up.
    if (depth > deepest.taken) deepest = { taken: depth, state, last: depth > 0 ? stackOp[depth - 1] : -1, blocked: entryOp[entry] };
    if (depth === 0) return { kind: "not-linearizable", steps, memo: memo?.size ?? 0, deepest };
    depth--;
    const op = stackOp[depth];
    state = stackState[depth];
    top = stackTop[depth];
    decided[op] = 0;
    list.unlift(op);
    entry = list.after(callEntry[op]);
  }
  return { kind: "linearizable", steps, memo: memo?.size ?? 0 };
}

const HEAD = 0;
const TAIL = 1;
/** Entries appended at a time when the search reaches the end of those built so far (tests make it 1 to stress the appending). */
export const tuning = { batch: 512 };

/**
 * The history's calls and returns as a doubly linked list in time order (a call
 * before a return at the same position), between a head and a tail node. Entries
 * are appended only when the search reaches the tail; an operation's entries are
 * lifted out when it takes effect and put back, in reverse order, when the search
 * backs up (Knuth's dancing links). Entries are numbered in time order, so the list
 * is always in the order of their numbers.
 */
class Entries {
  readonly next: Int32Array;
  readonly prev: Int32Array;
  readonly entryOp: Int32Array;
  readonly isCall: Uint8Array;
  readonly callEntry: Int32Array;
  private readonly retEntry: Int32Array;
  private used = 2;
  private call = 0;
  // Returns of operations already called, a min-heap by position.
  private readonly heap: Int32Array;
  private heapSize = 0;

  constructor(private readonly h: SearchHistory) {
    const n = h.length;
    const size = 2 * n + 2;
    this.next = new Int32Array(size);
    this.prev = new Int32Array(size);
    this.entryOp = new Int32Array(size);
    this.isCall = new Uint8Array(size);
    this.callEntry = new Int32Array(n);
    this.retEntry = new Int32Array(n).fill(-1);
    this.heap = new Int32Array(n);
    this.next[HEAD] = TAIL;
    this.prev[TAIL] = HEAD;
  }

  /** The first entry, built if need be (TAIL: none left). */
  first(): number {
    return this.next[HEAD] === TAIL ? this.extend() : this.next[HEAD];
  }

  /** The entry after `e`, built if need be (TAIL: none left). */
  after(e: number): number {
    return this.next[e] === TAIL ? this.extend() : this.next[e];
  }

  lift(op: number): void {
    // Both entries go out together, so the return is built first if need be.
    while (this.retEntry[op] < 0 && this.h.ret[op] >= 0) this.extend();
    const { next, prev } = this;
    const c = this.callEntry[op];
    next[prev[c]] = next[c];
    prev[next[c]] = prev[c];
    const r = this.retEntry[op];
    if (r >= 0) {
      next[prev[r]] = next[r];
      prev[next[r]] = prev[r];
    }
  }

  // An entry's successor is taken afresh from its predecessor rather than from the
  // link it had when lifted: entries may have been appended since. Its predecessor
  // is the one it had (what was lifted after it has been put back), and the list is
  // in entry order, so whatever follows the predecessor now belongs after it.
  unlift(op: number): void {
    const { next, prev } = this;
    const r = this.retEntry[op];
    if (r >= 0) {
      next[r] = next[prev[r]];
      next[prev[r]] = r;
      prev[next[r]] = r;
    }
    const c = this.callEntry[op];
    next[c] = next[prev[c]];
    next[prev[c]] = c;
    prev[next[c]] = c;
  }

  /** Appends the next batch of entries before the tail; returns the first of them, or TAIL. */
  private extend(): number {
    const { h } = this;
    let first = TAIL;
    for (let k = 0; k < tuning.batch; k++) {
      const r = this.heapSize > 0 ? this.heap[0] : -1;
      let e: number;
      if (this.call < h.length && (r < 0 || h.call[this.call] <= h.ret[r])) {
        const op = this.call++;
        e = this.callEntry[op] = this.append(op, 1);
        if (h.ret[op] >= 0) this.push(op);
      } else if (r >= 0) {
        this.pop();
        e = this.retEntry[r] = this.append(r, 0);
      } else break;
      if (first === TAIL) first = e;
    }
    return first;
  }

  private append(op: number, call: number): number {
    const e = this.used++;
    this.entryOp[e] = op;
    this.isCall[e] = call;
    const last = this.prev[TAIL];
    this.next[last] = e;
    this.prev[e] = last;
    this.next[e] = TAIL;
    this.prev[TAIL] = e;
    return e;
  }

  private push(op: number): void {
    const { heap } = this;
    const ret = this.h.ret;
    let i = this.heapSize++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (ret[heap[parent]] <= ret[op]) break;
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = op;
  }

  private pop(): void {
    const { heap } = this;
    const ret = this.h.ret;
    const last = heap[--this.heapSize];
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.heapSize) break;
      const c = l + 1 < this.heapSize && ret[heap[l + 1]] < ret[heap[l]] ? l + 1 : l;
      if (ret[heap[c]] >= ret[last]) break;
      heap[i] = heap[c];
      i = c;
    }
    heap[i] = last;
  }
}
