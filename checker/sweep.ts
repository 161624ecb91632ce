// The one question several analyses ask of real time: of the things that certainly
// finished before this one started, which is the best by some measure? Sorting both
// sides once keeps it O(n log n) on histories of millions of events. Keys are read
// once into arrays, and lists already in order (operations come in invoke order)
// are not sorted again.

/** `ids` in ascending order of `key` (equal keys keep their order). */
export function sortedBy(ids: ArrayLike<number>, key: (id: number) => number): number[] {
  const n = ids.length;
  const keys = new Float64Array(n);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    keys[i] = key(ids[i]);
    if (i > 0 && keys[i] < keys[i - 1]) sorted = false;
  }
  if (sorted) return copy(ids);
  const at: number[] = new Array(n);
  for (let i = 0; i < n; i++) at[i] = i;
  at.sort((a, b) => keys[a] - keys[b] || 0);
  const out: number[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = ids[at[i]];
  return out;
}

export interface Sweep {
  /** Positions of the items in order of start (equal starts keep their order). */
  order: number[];
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

// Array.from and TypedArray.from go through the iterator protocol: a loop is several times faster.
function copy(ids: ArrayLike<number>): number[] {
  const out: number[] = new Array(ids.length);
  for (let i = 0; i < ids.length; i++) out[i] = ids[i];
  return out;
}
