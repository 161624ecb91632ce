// The one question several analyses ask of real time: of the things that certainly
// finished before this one started, which is the best by some measure? Sorting both
// sides once keeps it O(n log n) on histories of millions of events. Keys are read
// once into arrays, and lists already in order (operations come in invoke order)
// are not sorted again.

/** `ids` (integers: ids of operations, holds, positions) in ascending order of `key` (equal keys keep their order). */
export function sortedBy(ids: ArrayLike<number>, key: (id: number) => number): Int32Array {
  const n = ids.length;
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = key(ids[i]);
  const order = orderOf(keys);
  // In place of the order itself: 4 bytes an id, where an array of numbers takes 8 or more.
  for (let i = 0; i < n; i++) order[i] = ids[order[i]];
  return order;
}

/**
 * Positions of `keys` in ascending order of their values, equal values in order of
 * position. Keys are nearly always integers (times in ns, fences): those are sorted
 * by radix, a few linear passes, where a comparator sort calls back into
 * JavaScript n log n times. Anything else (halves, infinities, NaN, which comes
 * last) takes the comparator.
 */
export function orderOf(keys: Float64Array): Int32Array {
  const n = keys.length;
  let sorted = true;
  let integers = true;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const x = keys[i];
    if (i > 0 && !(keys[i - 1] <= x)) sorted = false;
    if (x !== Math.floor(x) || x === Infinity || x === -Infinity) integers = false;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  if (sorted && integers) return identity(n);
  if (integers && max - min <= Number.MAX_SAFE_INTEGER) return radixOrder(keys, min, max - min);
  const at = Array.from(identity(n)).sort((a, b) => {
    const x = keys[a], y = keys[b];
    if (Number.isNaN(x) || Number.isNaN(y)) return (Number.isNaN(x) ? 1 : 0) - (Number.isNaN(y) ? 1 : 0) || a - b;
    return x < y ? -1 : x > y ? 1 : a - b;
  });
  return Int32Array.from(at);
}

function identity(n: number): Int32Array {
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}

const RADIX = 2048;

/** Least significant digit first, 11 bits a pass; each pass is stable, so equal keys keep their order. */
function radixOrder(keys: Float64Array, min: number, range: number): Int32Array {
  const n = keys.length;
  let order: Int32Array = identity(n);
  let next: Int32Array = new Int32Array(n);
  const count = new Int32Array(RADIX);
  // Digits by division, exact for integers below 2^53; `& (RADIX - 1)` truncates
  // the quotient and keeps its low bits, whatever its size.
  for (let unit = 1; unit <= range; unit *= RADIX) {
    count.fill(0);
    for (let i = 0; i < n; i++) count[((keys[i] - min) / unit) & (RADIX - 1)]++;
    for (let d = 0, at = 0; d < RADIX; d++) {
      const c = count[d];
      count[d] = at;
      at += c;
    }
    for (let i = 0; i < n; i++) {
      const p = order[i];
      next[count[((keys[p] - min) / unit) & (RADIX - 1)]++] = p;
    }
    const done = next;
    next = order;
    order = done;
  }
  return order;
}

export interface Sweep {
  /** Positions of the items in order of start (equal starts keep their order). */
  order: Int32Array;
  /** Per item position: the pool position of the highest-scoring member whose end is strictly before the item's start (ties keep the one that ended first), or -1. */
  best: Int32Array;
}

/** The pool and the items are given by their keys, position by position. */
export function bestBefore(poolEnd: Float64Array, poolScore: Float64Array, itemStart: Float64Array): Sweep {
  const positions = (n: number): number[] => {
    const out: number[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = i;
    return out;
  };
  const ps = sortedBy(positions(poolEnd.length), (p) => poolEnd[p]);
  const order = sortedBy(positions(itemStart.length), (b) => itemStart[b]);
  const best = new Int32Array(itemStart.length);
  let i = 0;
  let top = -1;
  for (const b of order) {
    const s = itemStart[b];
    for (; i < ps.length && poolEnd[ps[i]] < s; i++) if (top < 0 || poolScore[ps[i]] > poolScore[top]) top = ps[i];
    best[b] = top;
  }
  return { order, best };
}

/** `f` of each id, position by position. */
export function column(ids: ArrayLike<number>, f: (id: number) => number): Float64Array {
  const out = new Float64Array(ids.length);
  for (let i = 0; i < ids.length; i++) out[i] = f(ids[i]);
  return out;
}
