// A small seeded generator (sfc32). The same --seed must give the same schedule of
// operations and faults, so nothing that shapes a schedule may use Math.random.

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number;
  /** Uniform real in [lo, hi). */
  between(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  /** Exponential with the given mean: the gaps of an open (Poisson) arrival model. */
  exp(mean: number): number;
}

/** A generator for one purpose, e.g. rng(seed, "client", 3): streams do not interfere. */
export function rng(seed: number, ...stream: Array<string | number>): Rng {
  let h = 1779033703 ^ seed;
  for (const part of [String(seed), ...stream.map(String)]) {
    for (let i = 0; i < part.length; i++) {
      h = Math.imul(h ^ part.charCodeAt(i), 3432918353);
      h = (h << 13) | (h >>> 19);
    }
    h = Math.imul(h ^ 0x9e3779b9, 2654435761);
  }
  let a = h >>> 0, b = Math.imul(h, 0x85ebca6b) >>> 0, c = Math.imul(h, 0xc2b2ae35) >>> 0, d = (seed ^ 0xdeadbeef) >>> 0;
  const next = (): number => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    const t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    const r = (t + d) | 0;
    c = (c + r) | 0;
    return (r >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    between: (lo, hi) => lo + next() * (hi - lo),
    pick: (items) => items[Math.floor(next() * items.length)],
    exp: (mean) => -Math.log(1 - next()) * mean,
  };
}

/** The items in a random order (Fisher-Yates), drawn from `r`. */
export function shuffled<T>(r: Rng, items: readonly T[]): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = r.int(0, i);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}
