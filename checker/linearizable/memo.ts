// The search's memory of configurations already explored (wgl.ts): an
// open-addressing set of (highest operation taken effect, state, operations still
// pending below it), the last kept in one shared pool, all in typed arrays so that
// millions of entries cost tens of megabytes and no garbage collection.

export class Memo {
  size = 0;
  private slots = new Int32Array(1 << 12);
  private top = new Int32Array(1 << 11);
  private state = new Float64Array(1 << 11);
  private from = new Int32Array(1 << 11);
  private count = new Int32Array(1 << 11);
  private pool = new Int32Array(1 << 12);
  private used = 0;

  /** `max` entries are kept; past that the memo is emptied, which costs speed, never correctness. */
  constructor(private readonly max: number) {}

  /** Adds the configuration; false when it was already there. */
  add(top: number, state: number, pending: Int32Array, count: number): boolean {
    const hash = hashOf(top, state, pending, 0, count);
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const at = this.slots[slot] - 1;
      if (at < 0) break;
      if (this.top[at] === top && this.state[at] === state && this.count[at] === count && this.samePending(at, pending, count)) return false;
    }
    if (this.size >= this.max) this.clear();
    this.store(top, state, pending, count);
    return true;
  }

  private samePending(at: number, pending: Int32Array, count: number): boolean {
    const from = this.from[at];
    for (let i = 0; i < count; i++) if (this.pool[from + i] !== pending[i]) return false;
    return true;
  }

  private store(top: number, state: number, pending: Int32Array, count: number): void {
    if (this.size === this.top.length) this.growEntries();
    if (this.used + count > this.pool.length) this.pool = grown(this.pool, Math.max(this.pool.length * 2, this.used + count));
    const at = this.size++;
    this.top[at] = top;
    this.state[at] = state;
    this.from[at] = this.used;
    this.count[at] = count;
    for (let i = 0; i < count; i++) this.pool[this.used++] = pending[i];
    if (this.size * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.place(at);
  }

  private place(at: number): void {
    const mask = this.slots.length - 1;
    let slot = hashOf(this.top[at], this.state[at], this.pool, this.from[at], this.count[at]) & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = at + 1;
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size);
    for (let at = 0; at < this.size; at++) this.place(at);
  }

  private growEntries(): void {
    const n = this.top.length * 2;
    this.top = grown(this.top, n);
    this.state = grown(this.state, n);
    this.from = grown(this.from, n);
    this.count = grown(this.count, n);
  }

  private clear(): void {
    this.size = 0;
    this.used = 0;
    this.slots.fill(0);
  }
}

function hashOf(top: number, state: number, ops: Int32Array, from: number, count: number): number {
  let hash = Math.imul(top ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul((state % 0x100000000) | 0, 0xc2b2ae35) ^ Math.floor(state / 0x100000000);
  for (let i = from; i < from + count; i++) hash = Math.imul(hash ^ ops[i], 0x27d4eb2d);
  return hash ^ (hash >>> 15);
}

function grown<T extends Int32Array | Float64Array>(a: T, size: number): T {
  const b = new (a.constructor as new (n: number) => T)(size);
  b.set(a);
  return b;
}
