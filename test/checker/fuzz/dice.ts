// The outcomes of one step (a reply lost, a grant made by a broken lock, a line the
// log loses) are read from the step's one `luck` number, each under a name of its
// own, so that two questions asked of one step do not get the same answer and a
// step shrunk to luck 0 still gives a mix of answers. Deterministic: a Plan replays.

/** A 32-bit mix (the finalizer of MurmurHash3): nearby inputs give unrelated outputs. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function nameHash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export class Dice {
  constructor(private readonly luck: number) {}

  /** 0..99, the same for the same step and name. */
  roll(name: string): number {
    return mix(this.luck * 0x9e3779b1 + nameHash(name)) % 100;
  }

  /** True with `percent` % chance. */
  chance(name: string, percent: number): boolean {
    return this.roll(name) < percent;
  }

  /** An integer in [lo, hi]. */
  between(name: string, lo: number, hi: number): number {
    return lo + (mix(this.luck ^ nameHash(name)) % (hi - lo + 1));
  }
}
