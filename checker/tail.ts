// Nearest-rank percentiles of a large list (waits, latencies) without sorting it:
// a selection puts the ranks asked for in place in linear time, where a sort of
// hundreds of thousands of numbers costs tens of milliseconds.

export interface Tail {
  p50: number;
  p99: number;
  max: number;
}

const round = (x: number): number => Number(x.toFixed(3));

/** p50, p99 (nearest rank) and max of `values`, rounded to 3 places; null when empty. Reorders `values`. */
export function tailOf(values: Float64Array): Tail | null {
  const n = values.length;
  if (n === 0) return null;
  const at = (q: number): number => Math.max(0, Math.ceil(q * n) - 1);
  const k50 = at(0.5);
  const k99 = at(0.99);
  select(values, k50, 0, n - 1);
  select(values, k99, k50, n - 1);
  let max = values[k99];
  for (let i = k99 + 1; i < n; i++) if (values[i] > max) max = values[i];
  return { p50: round(values[k50]), p99: round(values[k99]), max: round(max) };
}

/** Puts the k-th smallest of a[lo..hi] at a[k], none larger before it and none smaller after (Hoare). */
function select(a: Float64Array, k: number, lo: number, hi: number): void {
  while (hi > lo) {
    const x = a[lo], y = a[(lo + hi) >>> 1], z = a[hi];
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i++] = a[j];
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return;
  }
}
