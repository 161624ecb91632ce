// Column storage for what the analyses keep of a history. A two-million-event run
// holds about a million operations: as objects they cost hundreds of bytes each
// and every garbage collection walks them all; as columns of typed arrays they
// cost tens of bytes and the collector never looks inside. Strings that repeat
// (keys, owners, operation names, error codes) are stored once and named by number,
// and an absent number (a fence, a TTL, a completion time) is NaN.

/**
 * Numbers for strings: the first one seen is 0. An open-addressing table of ids
 * over typed arrays, hashed in JavaScript: with hundreds of thousands of owners a
 * Map's lookups miss the cache several times each, this one about once.
 */
export class Interner {
  readonly names: string[] = [];
  private hashes: Int32Array;
  private slots: Int32Array;

  /** `expected` names size the table up front, so a large run's owners are not rehashed as they come. */
  constructor(expected = 64) {
    let size = 128;
    while (size < 2 * expected) size *= 2;
    this.hashes = new Int32Array(size >> 1);
    this.slots = new Int32Array(size).fill(-1);
  }

  id(s: string): number {
    if (this.slots.length === 0) this.unseal();
    const hash = hashOf(s);
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const at = this.slots[slot];
      if (at < 0) {
        const id = this.names.length;
        this.names.push(s);
        if (id === this.hashes.length) {
          const bigger = new Int32Array(id * 2);
          bigger.set(this.hashes);
          this.hashes = bigger;
        }
        this.hashes[id] = hash;
        this.slots[slot] = id;
        if (2 * (id + 1) > mask) this.rehash();
        return id;
      }
      if (this.hashes[at] === hash && this.names[at] === s) return at;
    }
  }

  /**
   * Drops the table that finds a name's number, keeping the names: once a model is
   * built only names are looked up by number, and ten million events' owners make
   * the table about 30 MB. A later `id` builds it again.
   */
  seal(): void {
    this.slots = new Int32Array(0);
    this.hashes = new Int32Array(0);
  }

  private unseal(): void {
    let size = 128;
    while (size < 2 * (this.names.length + 1)) size *= 2;
    this.hashes = new Int32Array(Math.max(64, this.names.length));
    for (let id = 0; id < this.names.length; id++) this.hashes[id] = hashOf(this.names[id]);
    this.slots = new Int32Array(size >> 1).fill(-1);
    this.rehash();
  }

  private rehash(): void {
    const size = this.slots.length * 2;
    const mask = size - 1;
    this.slots = new Int32Array(size).fill(-1);
    for (let id = 0; id < this.names.length; id++) {
      let slot = this.hashes[id] & mask;
      while (this.slots[slot] >= 0) slot = (slot + 1) & mask;
      this.slots[slot] = id;
    }
  }
}

/** FNV-1a of a string's UTF-16 code units. */
function hashOf(s: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) hash = Math.imul(hash ^ s.charCodeAt(i), 0x01000193);
  return hash;
}

/** A growable list of integers (ids of operations, holds or decisions). */
export class IntList {
  items: Int32Array;
  length = 0;

  constructor(capacity = 8) {
    this.items = new Int32Array(capacity);
  }

  push(x: number): void {
    if (this.length === this.items.length) this.items = grow(this.items, this.length * 2);
    this.items[this.length++] = x;
  }

  toArray(): number[] {
    const out: number[] = new Array(this.length);
    for (let i = 0; i < this.length; i++) out[i] = this.items[i];
    return out;
  }
}

export const orNull = (x: number): number | null => (Number.isNaN(x) ? null : x);

/** An integer per process number (-1: none): an array for the usual small numbers, a map for others. */
export class ProcessSlots {
  private slots = new Int32Array(64).fill(-1);
  private readonly others = new Map<number, number>();

  get(p: number): number {
    if (p >= 0 && p < this.slots.length && Number.isInteger(p)) return this.slots[p];
    return this.others.get(p) ?? -1;
  }

  set(p: number, v: number): void {
    if (p >= 0 && p < 1 << 20 && Number.isInteger(p)) {
      if (p >= this.slots.length) {
        let size = this.slots.length;
        while (size <= p) size *= 2;
        const bigger = new Int32Array(size).fill(-1);
        bigger.set(this.slots);
        this.slots = bigger;
      }
      this.slots[p] = v;
    } else this.others.set(p, v);
  }
}

type Column = Float64Array | Float32Array | Int32Array | Uint16Array | Uint8Array;

/**
 * A column of numbers that are nearly always small integers or NaN (fences, TTLs,
 * seqs): 32-bit floats, which hold those exactly, until a number does not fit
 * (set through the owner's setter, which widens the column to 64 bits first).
 * Readers see the same numbers either way; ten million events save about 100 MB.
 */
export type Narrow = Float32Array | Float64Array;

/** `a` with `x` at `i`: `a`, or its copy in 64 bits (in the same kind of memory) when `x` is no 32-bit float. */
function putNarrow(a: Narrow, i: number, x: number): Narrow {
  if (!(a instanceof Float64Array || Math.fround(x) === x || x !== x)) {
    const wide = a.buffer instanceof SharedArrayBuffer ? shared(Float64Array, a.length) : new Float64Array(a.length);
    wide.set(a);
    a = wide;
  }
  a[i] = x;
  return a;
}
type ColumnType<T extends Column> = { new (buffer: ArrayBufferLike): T; BYTES_PER_ELEMENT: number };

/**
 * A column of `n` in shared memory: the operations' and holds' columns are read by
 * the verdict's second thread (checker/verdict-thread.ts) where they stand, never
 * copied. Typed arrays over shared memory are read and written as fast as others.
 */
function shared<T extends Column>(type: ColumnType<T>, n: number): T {
  return new type(new SharedArrayBuffer(n * type.BYTES_PER_ELEMENT));
}

function sharedCopy<T extends Column>(type: ColumnType<T>, from: Column): T {
  const a = shared(type, from.length);
  a.set(from);
  return a;
}

/** `a` in a longer array of its kind (in shared memory when `a` is), the new places set to `fill`. */
function grow<T extends Column>(a: T, size: number, fill = 0): T {
  const type = a.constructor as ColumnType<T>;
  const b = a.buffer instanceof SharedArrayBuffer ? shared(type, size) : new type(new ArrayBuffer(size * type.BYTES_PER_ELEMENT));
  b.set(a);
  if (fill !== 0) b.fill(fill, a.length);
  return b;
}

export const OK = 0;
export const FAIL = 1;
export const INFO = 2;
export const OUTCOMES = ["ok", "fail", "info"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/**
 * Client operations, in invoke order: an invoke and its completion make one row.
 * Ten million events make five million rows, so each column is as narrow as what
 * it holds allows: event indexes and process numbers take 32 bits until one does
 * not fit (`widen`), `queued` exists only once a client has reported one, and
 * the end of an operation is read from its completion (`endOf`).
 */
export class Ops {
  length = 0;
  f: Uint16Array;
  process: Int32Array | Float64Array;
  /** -1: no key. */
  key: Int32Array;
  /** Event indexes of the invoke and of the completion (-1: never completed). */
  invoke: Int32Array | Float64Array;
  done: Int32Array | Float64Array;
  start: Float64Array;
  /** Time of the completion (NaN: none). */
  doneTime: Float64Array;
  /** OK, FAIL or INFO; an invoke still open at the end counts as INFO. */
  outcome: Uint8Array;
  /** The completion's `error` (-1: none). */
  error: Int32Array;
  /** The hold it was sent for, from the invoke's value; for an ok acquire, the owner granted (-1: none). */
  owner: Int32Array;
  /** Likewise the fence (NaN: none). */
  fence: Narrow;
  /** Acquire and renew: the lease in ms, the smaller of asked and granted when ok, as asked otherwise (NaN: none). */
  ttl: Narrow;
  /** A release that completed ok with `released: false`. */
  notReleased: Uint8Array;
  /** An acquire that completed ok: the `queued_ms` its client reported (NaN: none); null until one was (queuedOf). */
  private queued: Float64Array | null = null;
  /** The hold an acquire made or a renew, release or write belongs to (-1: none). */
  hold: Int32Array;
  /** The next renew, release or write of the same hold, in invoke order (-1: none). */
  next: Int32Array;
  /** The invoke's `value.data` (writes); undefined for most (for all in a model built without it, PairingBuilder). */
  data: unknown[] = [];

  private cap: number;

  constructor(capacity = 1024) {
    this.cap = Math.max(16, capacity);
    this.f = shared(Uint16Array, this.cap);
    this.process = shared(Int32Array, this.cap);
    this.key = shared(Int32Array, this.cap);
    this.invoke = shared(Int32Array, this.cap);
    this.done = shared(Int32Array, this.cap);
    this.start = shared(Float64Array, this.cap);
    this.doneTime = shared(Float64Array, this.cap);
    this.outcome = shared(Uint8Array, this.cap);
    this.error = shared(Int32Array, this.cap);
    this.owner = shared(Int32Array, this.cap);
    this.fence = shared(Float32Array, this.cap);
    this.ttl = shared(Float32Array, this.cap);
    this.notReleased = shared(Uint8Array, this.cap);
    this.hold = shared(Int32Array, this.cap);
    this.next = shared(Int32Array, this.cap);
  }

  add(): number {
    if (this.length === this.cap) {
      this.cap *= 2;
      this.f = grow(this.f, this.cap);
      this.process = grow(this.process, this.cap);
      this.key = grow(this.key, this.cap);
      this.invoke = grow(this.invoke, this.cap);
      this.done = grow(this.done, this.cap);
      this.start = grow(this.start, this.cap);
      this.doneTime = grow(this.doneTime, this.cap);
      this.outcome = grow(this.outcome, this.cap);
      this.error = grow(this.error, this.cap);
      this.owner = grow(this.owner, this.cap);
      this.fence = grow(this.fence, this.cap);
      this.ttl = grow(this.ttl, this.cap);
      this.notReleased = grow(this.notReleased, this.cap);
      if (this.queued) this.queued = grow(this.queued, this.cap, NaN);
      this.hold = grow(this.hold, this.cap);
      this.next = grow(this.next, this.cap);
    }
    return this.length++;
  }

  setFence(i: number, x: number): void {
    this.fence = putNarrow(this.fence, i, x);
  }

  setTtl(i: number, x: number): void {
    this.ttl = putNarrow(this.ttl, i, x);
  }

  /** Whether an event index or process number `x` can be stored; call `widen` first when not. */
  static fits(x: number): boolean {
    return (x | 0) === x;
  }

  /** Event indexes and process numbers in 64-bit columns, for a history whose numbers outgrow 32 bits. */
  widen(): void {
    if (this.invoke instanceof Float64Array) return;
    this.process = sharedCopy(Float64Array, this.process);
    this.invoke = sharedCopy(Float64Array, this.invoke);
    this.done = sharedCopy(Float64Array, this.done);
  }

  /**
   * The latest time the operation can have taken effect: its ok or fail, else
   * Infinity. Read from the completion's time rather than kept in a column of its
   * own, which ten million events would make 40 MB.
   */
  endOf(i: number): number {
    return this.outcome[i] === INFO ? Infinity : this.doneTime[i];
  }

  /** Whether any client reported a `queued_ms`. */
  get reportsQueued(): boolean {
    return this.queued !== null;
  }

  queuedOf(i: number): number {
    return this.queued === null ? NaN : this.queued[i];
  }

  setQueued(i: number, ms: number): void {
    this.queued ??= shared(Float64Array, this.cap).fill(NaN);
    this.queued[i] = ms;
  }
}

/** Successful acquires, each a hold of one key by one owner. */
export class Holds {
  length = 0;
  key: Int32Array;
  owner: Int32Array;
  fence: Narrow;
  /** The acquire operation. */
  acquire: Int32Array;
  /** The lease asked for and granted (the smaller), in ms (NaN: neither known). */
  ttl: Narrow;
  /** First and last of its renews, releases and writes (chained by Ops.next). */
  first: Int32Array;
  last: Int32Array;
  /**
   * Every hold in order of its acquire's ok, made once (paired.ts holdsInEndOrder)
   * by whichever thread asks first: `endOrderMade[0]` is 1 once it is.
   */
  endOrder: Int32Array = shared(Int32Array, 0);
  readonly endOrderMade = shared(Int32Array, 1);

  private cap: number;

  constructor(capacity = 256) {
    this.cap = Math.max(16, capacity);
    this.key = shared(Int32Array, this.cap);
    this.owner = shared(Int32Array, this.cap);
    this.fence = shared(Float32Array, this.cap);
    this.acquire = shared(Int32Array, this.cap);
    this.ttl = shared(Float32Array, this.cap);
    this.first = shared(Int32Array, this.cap);
    this.last = shared(Int32Array, this.cap);
  }

  setFence(h: number, x: number): void {
    this.fence = putNarrow(this.fence, h, x);
  }

  setTtl(h: number, x: number): void {
    this.ttl = putNarrow(this.ttl, h, x);
  }

  /** Makes room for the order of the holds there are now (holdsInEndOrder): call once they are all added. */
  allAdded(): void {
    this.endOrder = shared(Int32Array, this.length);
  }

  add(): number {
    if (this.length === this.cap) {
      this.cap *= 2;
      this.key = grow(this.key, this.cap);
      this.owner = grow(this.owner, this.cap);
      this.fence = grow(this.fence, this.cap);
      this.acquire = grow(this.acquire, this.cap);
      this.ttl = grow(this.ttl, this.cap);
      this.first = grow(this.first, this.cap);
      this.last = grow(this.last, this.cap);
    }
    return this.length++;
  }
}

/** resource.ndjson's decisions, in log order. */
/** A decision's outcome (Decisions.accepted): refused, took effect, or unknown (format 2's `accepted: null`). */
export const REFUSED = 0, ACCEPTED = 1, UNDECIDED = 2;

export class Decisions {
  length = 0;
  seq: Narrow;
  time: Float64Array;
  /** 1 for a write, 0 for a read. */
  write: Uint8Array;
  key: Int32Array;
  process: Narrow;
  owner: Int32Array;
  fence: Narrow;
  maxBefore: Narrow;
  /** REFUSED, ACCEPTED, or UNDECIDED (the store was lost during the commit: format 2's `accepted: null`). */
  accepted: Uint8Array;
  /** Whether the resource was enforcing fences when it decided. */
  fencing: Uint8Array;
  /** Format 2's `order`: the decision's place among its key's, as the store assigned it (NaN: none). */
  order: Float64Array;
  /** Whether any decision has an `order` (else the log's order is the order decisions took effect). */
  ordered = false;
  data: unknown[] = [];

  private cap: number;

  constructor(capacity = 1024) {
    this.cap = Math.max(16, capacity);
    this.seq = new Float32Array(this.cap);
    this.time = new Float64Array(this.cap);
    this.write = new Uint8Array(this.cap);
    this.key = new Int32Array(this.cap);
    this.process = new Float32Array(this.cap);
    this.owner = new Int32Array(this.cap);
    this.fence = new Float32Array(this.cap);
    this.maxBefore = new Float32Array(this.cap);
    this.accepted = new Uint8Array(this.cap);
    this.fencing = new Uint8Array(this.cap);
    this.order = new Float64Array(this.cap).fill(NaN);
  }

  // Each narrow column set by a setter of its own, which widens it when `x` does not
  // fit: one setter taking the column's name made every decision's four stores
  // look their column up by name.
  setSeq(i: number, x: number): void {
    this.seq = putNarrow(this.seq, i, x);
  }

  setProcess(i: number, x: number): void {
    this.process = putNarrow(this.process, i, x);
  }

  setFence(i: number, x: number): void {
    this.fence = putNarrow(this.fence, i, x);
  }

  setMaxBefore(i: number, x: number): void {
    this.maxBefore = putNarrow(this.maxBefore, i, x);
  }

  add(): number {
    if (this.length === this.cap) {
      this.cap *= 2;
      this.seq = grow(this.seq, this.cap);
      this.time = grow(this.time, this.cap);
      this.write = grow(this.write, this.cap);
      this.key = grow(this.key, this.cap);
      this.process = grow(this.process, this.cap);
      this.owner = grow(this.owner, this.cap);
      this.fence = grow(this.fence, this.cap);
      this.maxBefore = grow(this.maxBefore, this.cap);
      this.accepted = grow(this.accepted, this.cap);
      this.fencing = grow(this.fencing, this.cap);
      this.order = grow(this.order, this.cap, NaN);
    }
    return this.length++;
  }
}
