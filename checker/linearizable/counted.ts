// The fenced mutex with counts: the models of an rw lock and of a semaphore of N
// permits, over the same histories as the mutex's (fenced-mutex.ts, which says
// what each operation becomes). An rw lock grants a read while no writer holds
// it and a write while nobody holds it; a semaphore grants while fewer than N
// hold it. A renew or release takes effect only while its hold holds; a release
// frees that hold's place; a release that answered `released: false` only once
// its hold no longer holds. Fences as the mutex's: each acquire with a fence must
// have one above every fence granted before it, readers and permits alike (the
// checker's duplicate-fence and fence-regression ask the same of every kind).
//
// A state is the number of holders (a writer counts as H + 1, H the key's holds)
// and the hold whose fence was granted last: occupancy * (H + 1) + (fenced + 1).
// Which holds still hold is not in it: a hold holds from its acquire until one of
// its releases took effect, which the search's set of operations taken effect
// tells (SearchModel.watch). The memo remembers that set, so a state and that set
// still name a configuration exactly; the set leaves out only unknown releases
// that `settled` says can no longer take effect, whose hold no longer holds
// whether they did or not, and whose count is the same either way.
import { MODE_READ } from "../../store/event-fields.ts";
import type { LockFacts, Paired } from "../paired.ts";
import { ACQUIRE, NOT_RELEASED, RELEASE_OK, RENEW_OK, type MutexHistory } from "./fenced-mutex.ts";
import type { SearchModel } from "./wgl.ts";

/** What the model check needs of the lock's kind; the verdict's second thread gets it in the model's view. */
export interface LockKind {
  lock: LockFacts["lock"];
  /** A semaphore's permits (1 for the others). */
  permits: number;
  /** An rw lock's read holds: 1 by hold id (null for the other kinds). */
  reads: Uint8Array | null;
}

const REFUSED = -2;
const MUTEX: LockKind = { lock: "mutex", permits: 1, reads: null };

/** Whether the kind's model is a count's (rw, semaphore) rather than the mutex's (mutex, reentrant). */
export const counted = (k: LockKind): boolean => k.lock === "rw" || k.lock === "semaphore";

/** The kind of `m`'s lock, its read holds found from the acquires' modes (rw only: nothing to do for the others). */
export function lockKindOf(m: Paired): LockKind {
  const k = m.kind;
  if (k === null) return MUTEX;
  if (k.lock !== "rw") return { lock: k.lock, permits: k.permits, reads: null };
  const reads = new Uint8Array(m.holds.length);
  for (const [op, mode] of k.mode) {
    const h = m.ops.hold[op];
    if (mode === MODE_READ && h >= 0 && m.holds.acquire[h] === op) reads[h] = 1;
  }
  return { lock: k.lock, permits: 1, reads };
}

export interface CountedModel extends SearchModel {
  /** Holders in `state` (a writer counts as one), whether one of them is a writer, and the hold whose fence was granted last (-1: none). */
  holders(state: number): number;
  writer(state: number): boolean;
  fenced(state: number): number;
  /** Whether hold `j` (by position) asks to read (rw), and how many may hold at once. */
  reads(j: number): boolean;
  /** An rw lock's model (else a semaphore's), and how many may hold at once. */
  readonly rw: boolean;
  readonly permits: number;
}

/** The model of one key's history for an rw lock or a semaphore (`kind`). */
export function countedModel(h: MutexHistory, kind: LockKind): CountedModel {
  const H = h.holds.length;
  const W = H + 1;
  const rw = kind.lock === "rw";
  const permits = rw ? H : kind.permits;
  const reads = new Uint8Array(H);
  if (kind.reads) for (let j = 0; j < H; j++) reads[j] = kind.reads[h.holds[j]];
  // Each hold's releases that free it (answered or not), by position: a hold has one, nearly always.
  const from = new Int32Array(H + 1);
  for (let i = 0; i < h.length; i++) if (h.kind[i] === RELEASE_OK) from[h.hold[i] + 1]++;
  for (let j = 0; j < H; j++) from[j + 1] += from[j];
  const releases = new Int32Array(from[H]);
  const at = from.slice(0, H);
  for (let i = 0; i < h.length; i++) if (h.kind[i] === RELEASE_OK) releases[at[h.hold[i]]++] = i;

  let decided: Uint8Array = new Uint8Array(0);
  const holds = (j: number): boolean => {
    if (decided[h.acquireOf[j]] !== 1) return false;
    for (let k = from[j]; k < from[j + 1]; k++) if (decided[releases[k]] === 1) return false;
    return true;
  };
  const pack = (occupancy: number, fenced: number): number => occupancy * (H + 1) + fenced + 1;
  const occupancy = (state: number): number => Math.floor(state / (H + 1));
  const fenced = (state: number): number => (state % (H + 1)) - 1;
  // The hold whose fence was granted last once hold j's acquire takes effect, or REFUSED: its fence is not above that one.
  const fencedAfter = (state: number, j: number): number => {
    const last = fenced(state);
    if (Number.isNaN(h.fences[j])) return last;
    return last >= 0 && !(h.fences[j] > h.fences[last]) ? REFUSED : j;
  };
  return {
    init: pack(0, -1),
    rw,
    permits,
    holders: (state) => (occupancy(state) === W ? 1 : occupancy(state)),
    writer: (state) => occupancy(state) === W,
    fenced,
    reads: (j) => rw && reads[j] === 1,
    watch(d) {
      decided = d;
    },
    step(state, op) {
      const j = h.hold[op];
      const o = occupancy(state);
      switch (h.kind[op]) {
        case ACQUIRE: {
          const read = !rw || reads[j] === 1;
          if (read ? o === W || o >= permits : o !== 0) return -1;
          const f = fencedAfter(state, j);
          return f === REFUSED ? -1 : pack(read ? o + 1 : W, f);
        }
        case RENEW_OK:
          return holds(j) ? state : -1;
        case RELEASE_OK:
          return holds(j) ? pack(o === W ? 0 : o - 1, fenced(state)) : -1;
        case NOT_RELEASED:
        default:
          return holds(j) ? -1 : state;
      }
    },
    // A release with no answer matters only while its hold may still hold.
    settled(_state, op) {
      const j = h.hold[op];
      return decided[h.acquireOf[j]] === 1 && !holds(j);
    },
  };
}

/**
 * An acquire that no order can let take effect, found without a search: holds
 * that certainly held all through its span (acquired before it was invoked, no
 * release invoked before it returned) that keep it out, as many as its kind
 * needs (a writer for a read, anyone for a write, N for a semaphore's). -1:
 * none. A lease run out under a paused holder makes these; found so, they
 * spare the search a key whose concurrent readers it would otherwise try in
 * every order before it gave up.
 */
export function certainlyRefused(h: MutexHistory, model: CountedModel): number {
  const H = h.holds.length;
  // Each hold's certain span in event positions: from its acquire's return to its first freeing release's call.
  const until = new Float64Array(H).fill(Infinity);
  for (let i = 0; i < h.length; i++) if (h.kind[i] === RELEASE_OK && h.call[i] < until[h.hold[i]]) until[h.hold[i]] = h.call[i];
  const byReturn = Array.from(h.acquireOf, (_, j) => j).sort((a, b) => h.ret[h.acquireOf[a]] - h.ret[h.acquireOf[b]]);
  let next = 0;
  const active: number[] = [];
  for (let i = 0; i < h.length; i++) {
    if (h.kind[i] !== ACQUIRE) continue;
    const call = h.call[i], ret = h.ret[i];
    while (next < H && h.ret[h.acquireOf[byReturn[next]]] < call) active.push(byReturn[next++]);
    const read = !model.rw || model.reads(h.hold[i]);
    let through = 0;
    let kept = 0;
    for (const x of active) {
      if (until[x] <= call) continue;
      active[kept++] = x;
      if (until[x] > ret && (!model.rw || !read || !model.reads(x))) through++;
    }
    active.length = kept;
    if (model.rw ? through > 0 : through >= model.permits) return i;
  }
  return -1;
}
