// The fenced mutex: the model of a lock in Knossos (its `mutex`) and in Jepsen's
// tests of Hazelcast's FencedLock. A lock is free or held by one hold; an acquire
// takes it only when free, with a fence above every fence granted before; a renew
// or a release by its holder only; a release that answered `released: false` says
// the lock was no longer that hold's.
//
// What the history says of each operation becomes one of three things:
//  - ok: it took effect, somewhere between its invoke and its completion;
//  - fail: it did not (Jepsen's reading of a definite failure), so it is left out;
//  - info (or never completed): it may have taken effect at any time after its
//    invoke, or never. Such a release is kept, as an operation with no return. Such
//    an acquire or renew is left out: a renew changes nothing, and an acquire that
//    no one heard back from can only keep the lock from everyone else, since no
//    later operation can name the owner it would have made (docs/history-format.md:
//    a process that got info never issues another), so an order that leaves it out
//    is valid whenever one that keeps it is.
// Renews and releases whose owner no acquire returned are left out too: the
// checker warns about them, and they cannot be tied to a hold.
import type { Paired } from "../paired.ts";
import { INNER_RELEASE, RELEASE, RENEW } from "../paired.ts";
import { FAIL, INFO, OK } from "../table.ts";
import type { SearchHistory, SearchModel } from "./wgl.ts";

export const ACQUIRE = 0;
export const RENEW_OK = 1;
export const RELEASE_OK = 2;
/** An ok release with `released: false`. */
export const NOT_RELEASED = 3;

export interface MutexHistory extends SearchHistory {
  key: string;
  /** Per operation: its kind, its hold (by position in `holds`), its row in the model's operations. */
  kind: Uint8Array;
  hold: Int32Array;
  row: Int32Array;
  /** The key's holds (ids in the model) and their fences (NaN: none). */
  holds: Int32Array;
  fences: Float64Array;
  /** The operation that acquired each hold, and its releases (first kept one), by position. */
  acquireOf: Int32Array;
}

/** The lock operations of each key's holds, in invoke order, keys in the order of `holdsByKey`. */
export function mutexHistories(m: Paired): MutexHistory[] {
  const { ops, holds } = m;
  // Each hold's position among its key's holds, and each key's place in the output.
  const local = new Int32Array(holds.length);
  const place = new Int32Array(m.keys.names.length).fill(-1);
  const keys: string[] = [];
  for (const [key, list] of m.holdsByKey) {
    place[holds.key[list.items[0]]] = keys.length;
    keys.push(key);
    for (let j = 0; j < list.length; j++) local[list.items[j]] = j;
  }
  // Two passes over the operations in invoke order (count, then fill) put each key's in order.
  const counts = new Int32Array(keys.length);
  const placeOf = new Int32Array(ops.length);
  for (let r = 0; r < ops.length; r++) {
    const h = ops.hold[r];
    const f = ops.f[r];
    const kept = h >= 0 && (f === RENEW ? ops.outcome[r] === OK : f === RELEASE ? ops.outcome[r] !== FAIL && ops.notReleased[r] !== INNER_RELEASE : holds.acquire[h] === r);
    placeOf[r] = kept ? place[holds.key[h]] : -1;
    if (kept) counts[placeOf[r]]++;
  }
  // Each key's columns are stretches of columns for all keys: a run of thousands of
  // keys would otherwise allocate eight arrays a key.
  let total = 0;
  for (let k = 0; k < keys.length; k++) total += counts[k];
  const call = new Float64Array(total), ret = new Float64Array(total);
  const kind = new Uint8Array(total), hold = new Int32Array(total), row = new Int32Array(total);
  const holdIds = new Int32Array(holds.length), fences = new Float64Array(holds.length), acquireOf = new Int32Array(holds.length);
  let at = 0, hat = 0;
  const out = keys.map((key, k): MutexHistory => {
    const n = counts[k];
    const list = m.holdsByKey.get(key)!;
    const H = list.length;
    for (let j = 0; j < H; j++) {
      holdIds[hat + j] = list.items[j];
      fences[hat + j] = holds.fence[list.items[j]];
    }
    const x: MutexHistory = {
      key, length: n,
      call: call.subarray(at, at + n), ret: ret.subarray(at, at + n),
      kind: kind.subarray(at, at + n), hold: hold.subarray(at, at + n), row: row.subarray(at, at + n),
      holds: holdIds.subarray(hat, hat + H), fences: fences.subarray(hat, hat + H), acquireOf: acquireOf.subarray(hat, hat + H),
    };
    at += n;
    hat += H;
    return x;
  });
  const filled = new Int32Array(keys.length);
  for (let r = 0; r < ops.length; r++) {
    const k = placeOf[r];
    if (k < 0) continue;
    const h = ops.hold[r];
    const x = out[k];
    const i = filled[k]++;
    const j = local[h];
    x.row[i] = r;
    x.hold[i] = j;
    x.call[i] = ops.invoke[r];
    x.ret[i] = ops.outcome[r] === INFO ? -1 : ops.done[r];
    const f = ops.f[r];
    if (f === RENEW) x.kind[i] = RENEW_OK;
    else if (f === RELEASE) x.kind[i] = ops.notReleased[r] ? NOT_RELEASED : RELEASE_OK;
    else {
      x.kind[i] = ACQUIRE;
      x.acquireOf[j] = i;
    }
  }
  return out;
}

/**
 * The model over one key's history. A state names the holder (a hold's position, or
 * none) and the hold whose fence was granted last: (holder + 1) * (H + 1) + (fenced + 1).
 */
export function mutexModel(h: MutexHistory): SearchModel & { holder(state: number): number; fenced(state: number): number } {
  const H = h.holds.length;
  const pack = (holder: number, fenced: number): number => (holder + 1) * (H + 1) + fenced + 1;
  const holder = (state: number): number => Math.floor(state / (H + 1)) - 1;
  const fenced = (state: number): number => (state % (H + 1)) - 1;
  return {
    init: pack(-1, -1),
    holder,
    fenced,
    step(state, op) {
      const held = holder(state);
      const j = h.hold[op];
      switch (h.kind[op]) {
        case ACQUIRE: {
          if (held >= 0) return -1;
          const last = fenced(state);
          const fence = h.fences[j];
          if (Number.isNaN(fence)) return pack(j, last);
          if (last >= 0 && !(fence > h.fences[last])) return -1;
          return pack(j, j);
        }
        case RENEW_OK:
          return held === j ? state : -1;
        case RELEASE_OK:
          return held === j ? pack(-1, fenced(state)) : -1;
        default:
          return held !== j ? state : -1;
      }
    },
    // A release with no answer matters only while its hold may still hold the lock.
    settled(state, op, decided) {
      return decided[h.acquireOf[h.hold[op]]] === 1 && holder(state) !== h.hold[op];
    },
  };
}
