// The one question several analyses ask of real time: of the things that certainly
// finished before this one started, which is the best by some measure? Sorting both
// sides once keeps it O(n log n) on histories of millions of events.

/**
 * Calls `visit` for each item with the highest-scoring member of `pool` whose end
 * is strictly before the item's start (ties keep the one that ended first).
 */
export function bestBefore<A, B>(
  pool: readonly A[],
  endOf: (a: A) => number,
  score: (a: A) => number,
  items: readonly B[],
  startOf: (b: B) => number,
  visit: (item: B, best: A | undefined) => void,
): void {
  const ps = [...pool].sort((x, y) => endOf(x) - endOf(y));
  const bs = [...items].sort((x, y) => startOf(x) - startOf(y));
  let i = 0;
  let best: A | undefined;
  for (const b of bs) {
    const s = startOf(b);
    for (; i < ps.length && endOf(ps[i]) < s; i++) {
      if (best === undefined || score(ps[i]) > score(best)) best = ps[i];
    }
    visit(b, best);
  }
}

/** Groups items by a string key, keeping their order. */
export function groupBy<T>(items: Iterable<T>, keyOf: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const t of items) {
    const k = keyOf(t);
    const list = out.get(k);
    if (list) list.push(t);
    else out.set(k, [t]);
  }
  return out;
}
