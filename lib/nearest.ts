// The valid word nearest a mistyped one, for "did you mean ...?": a command, an
// option, a configuration's option. Edit distance (Damerau-Levenshtein's optimal
// string alignment, so a swap of two neighbours counts once, "tset" for "test"),
// ties broken by the shared prefix and then by the order given.

/** The edit distance between `a` and `b`, a transposition of neighbours counting as one edit. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push([i]);
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        rows[0].push(j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2][j - 2] + 1);
      rows[i].push(d);
    }
  }
  return rows[a.length][b.length];
}

const sharedPrefix = (a: string, b: string): number => {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
};

/** The candidate nearest `word`, or null when there is none to choose from. */
export function nearest(word: string, candidates: Iterable<string>): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  let bestPrefix = -1;
  const w = word.toLowerCase();
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    const p = sharedPrefix(w, c.toLowerCase());
    if (d < bestDistance || (d === bestDistance && p > bestPrefix)) {
      best = c;
      bestDistance = d;
      bestPrefix = p;
    }
  }
  return best;
}

/** "; did you mean --nemesis?" for a message, or "" when nothing is near enough to be a typo of it. */
export function didYouMean(word: string, candidates: Iterable<string>, prefix = ""): string {
  const n = nearest(word, candidates);
  return n === null ? "" : `; did you mean ${prefix}${n}?`;
}
