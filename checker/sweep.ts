// The one question several analyses ask of real time: of the things that certainly
// finished before this one started, which is the best by some measure? Sorting both
// sides once keeps it O(n log n) on histories of millions of events; the sort is a
// radix sort on the keys' bits, stable like Array.prototype.sort, because a
// comparator sort of a few hundred thousand ids costs more than all the rest.

const SMALL = 256;
const BITS = 11;
const BUCKETS = 1 << BITS;
const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

/** `ids` in ascending order of `key(id)` (no NaN keys), equal keys in their given order. */
export function sortedBy(ids: ArrayLike<number>, key: (id: number) => number): Int32Array {
  const n = ids.length;
  let out = Int32Array.from(ids);
  if (n < SMALL) return Int32Array.from(Array.from(out).sort((a, b) => key(a) - key(b) || 0));
  // The bits of a double, sign-adjusted, order like the doubles themselves.
  const lo = new Uint32Array(n);
  const hi = new Uint32Array(n);
  let sorted = true;
  let prev = -Infinity;
  for (let i = 0; i < n; i++) {
    const k = key(out[i]);
    if (k < prev) sorted = false;
    prev = k;
    f64[0] = k === 0 ? 0 : k;
    const h = u32[1];
    const negative = h >>> 31 === 1;
    lo[i] = negative ? ~u32[0] >>> 0 : u32[0];
    hi[i] = negative ? ~h >>> 0 : (h | 0x80000000) >>> 0;
  }
  if (sorted) return out;
  let tmp = new Int32Array(n);
  let tmpLo = new Uint32Array(n);
  let tmpHi = new Uint32Array(n);
  const count = new Int32Array(BUCKETS);
  let loW = lo;
  let hiW = hi;
  for (let shift = 0; shift < 64; shift += BITS) {
    const digit = (i: number): number =>
      shift >= 32 ? (hiW[i] >>> (shift - 32)) & (BUCKETS - 1)
        : shift + BITS <= 32 ? (loW[i] >>> shift) & (BUCKETS - 1)
          : ((loW[i] >>> shift) | (hiW[i] << (32 - shift))) & (BUCKETS - 1);
    count.fill(0);
    for (let i = 0; i < n; i++) count[digit(i)]++;
    if (count[digit(0)] === n) continue;
    for (let b = 0, sum = 0; b < BUCKETS; b++) {
      const c = count[b];
      count[b] = sum;
      sum += c;
    }
    for (let i = 0; i < n; i++) {
      const at = count[digit(i)]++;
      tmp[at] = out[i];
      tmpLo[at] = loW[i];
      tmpHi[at] = hiW[i];
    }
    [out, tmp] = [tmp, out];
    [loW, tmpLo] = [tmpLo, loW];
    [hiW, tmpHi] = [tmpHi, hiW];
  }
  return out;
}

/**
 * Calls `visit` for each item with the highest-scoring member of `pool` whose end
 * is strictly before the item's start (ties keep the one that ended first).
 */
export function bestBefore(
  pool: ArrayLike<number>,
  endOf: (a: number) => number,
  score: (a: number) => number,
  items: ArrayLike<number>,
  startOf: (b: number) => number,
  visit: (item: number, best: number | undefined) => void,
): void {
  const ps = sortedBy(pool, endOf);
  const bs = sortedBy(items, startOf);
  let i = 0;
  let best: number | undefined;
  for (let j = 0; j < bs.length; j++) {
    const b = bs[j];
    const s = startOf(b);
    for (; i < ps.length && endOf(ps[i]) < s; i++) {
      if (best === undefined || score(ps[i]) > score(best)) best = ps[i];
    }
    visit(b, best);
  }
}
