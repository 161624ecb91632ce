// Lines of history.ndjson and resource.ndjson read straight from their bytes when
// they are laid out the plain way the runner and the resource write them (no
// spaces, ASCII strings without escapes, integers, a `value` of plain fields).
// A history line goes into one reused record of the parsed line's shape, which
// readFields (event-fields.ts) then checks as it checks JSON.parse's result: for
// such a line the record holds exactly what JSON.parse would give (an absent field
// reads as undefined either way), so the checks, messages and fields are the same,
// but nothing is allocated except the strings the checker keeps (owners, data),
// where JSON.parse builds an object and a string per value for every line; this
// roughly halves what reading a large run costs. Any other line (a float, an
// escape, an array, a key the checker does not read, a resource line in another
// order) gives `null`, and the reader uses JSON.parse. test/store/event-line.test.ts
// holds both readers to JSON.parse on generated lines of every shape.

import type { ResourceDecision } from "./events.ts";

const QUOTE = 34, BACKSLASH = 92, MINUS = 45, ZERO = 48, NINE = 57, COMMA = 44, COLON = 58, OPEN = 123, CLOSE = 125;
/** Digits of an integer read here: fewer than 16 is always a safe integer. */
const MAX_DIGITS = 15;

/** A parsed line as readFields reads it; absent fields are undefined. */
export interface LineRecord {
  index: unknown; time: unknown; process: unknown; type: unknown; f: unknown; key: unknown; error: unknown;
  value: ValueRecord | undefined;
}
export interface ValueRecord { owner: unknown; fence: unknown; ttl_ms: unknown; queued_ms: unknown; released: unknown; data: unknown }

const TOP = ["index", "time", "process", "type", "f", "key", "error", "value"] as const;
const VALUE = ["owner", "fence", "ttl_ms", "queued_ms", "released", "data"] as const;

/** Strings that recur (types, operations, keys, errors), kept once and matched by their bytes. */
class Names {
  private readonly bytes: Buffer[] = [];
  private readonly names: string[] = [];
  constructor(initial: readonly string[]) {
    for (const n of initial) this.add(n);
  }
  private add(n: string): string {
    this.bytes.push(Buffer.from(n, "latin1"));
    this.names.push(n);
    return n;
  }
  get(b: Buffer, s: number, e: number): string {
    const len = e - s;
    const all = this.bytes;
    for (let k = 0; k < all.length; k++) {
      const n = all[k];
      if (n.length !== len) continue;
      let i = 0;
      while (i < len && n[i] === b[s + i]) i++;
      if (i === len) return this.names[k];
    }
    const name = b.toString("latin1", s, e);
    // Only a few distinct names are worth remembering; the rest are made afresh.
    return all.length < 64 ? this.add(name) : name;
  }
}

/** Reads plain JSON values from a line's bytes, moving `pos` past each. */
class Cursor {
  protected readonly names = new Names(["invoke", "ok", "fail", "info", "acquire", "renew", "release", "write", "read", "timeout"]);
  protected pos = 0;
  /** Where the last string read starts and ends (its quotes excluded). */
  protected from = 0;
  protected to = 0;

  /** A plain ASCII string without escapes: sets from/to and moves past it. */
  protected string(b: Buffer, e: number): boolean {
    let i = this.pos;
    if (b[i] !== QUOTE) return false;
    const from = ++i;
    for (; i < e; i++) {
      const c = b[i];
      if (c === QUOTE) {
        this.from = from;
        this.to = i;
        this.pos = i + 1;
        return true;
      }
      if (c === BACKSLASH || c < 32 || c > 126) return false;
    }
    return false;
  }

  /** An integer, plain string, true, false or null; undefined: anything else. `named`: a string that recurs. */
  protected scalar(b: Buffer, e: number, named: boolean): unknown {
    let i = this.pos;
    const c = b[i];
    if (c === QUOTE) {
      if (!this.string(b, e)) return undefined;
      return named ? this.names.get(b, this.from, this.to) : b.toString("latin1", this.from, this.to);
    }
    if (c === MINUS || (c >= ZERO && c <= NINE)) {
      const neg = c === MINUS;
      if (neg) i++;
      const first = i;
      let n = 0;
      for (let d = b[i]; d >= ZERO && d <= NINE && i < e; d = b[++i]) n = n * 10 + (d - ZERO);
      const digits = i - first;
      if (digits === 0 || digits > MAX_DIGITS || (digits > 1 && b[first] === ZERO)) return undefined;
      const next = b[i];
      if (next !== COMMA && next !== CLOSE) return undefined;
      this.pos = i;
      return neg ? -n : n;
    }
    if (this.word(b, e, "true")) return true;
    if (this.word(b, e, "false")) return false;
    if (this.word(b, e, "null")) return null;
    return undefined;
  }

  protected word(b: Buffer, e: number, w: string): boolean {
    const i = this.pos;
    if (i + w.length > e) return false;
    for (let k = 0; k < w.length; k++) if (b[i + k] !== w.charCodeAt(k)) return false;
    this.pos = i + w.length;
    return true;
  }
}

export class EventLineReader extends Cursor {
  readonly line: LineRecord = { index: undefined, time: undefined, process: undefined, type: undefined, f: undefined, key: undefined, error: undefined, value: undefined };
  private readonly value: ValueRecord = { owner: undefined, fence: undefined, ttl_ms: undefined, queued_ms: undefined, released: undefined, data: undefined };

  /** The line `b[s, e)` in `line`, or null: read it with JSON.parse. */
  read(b: Buffer, s: number, e: number): LineRecord | null {
    const o = this.line;
    o.index = o.time = o.process = o.type = o.f = o.key = o.error = o.value = undefined;
    if (b[s] !== OPEN || b[e - 1] !== CLOSE) return null;
    this.pos = s + 1;
    let seen = 0;
    for (;;) {
      const k = this.keyOf(b, e, TOP);
      if (k < 0 || (seen & (1 << k)) !== 0) return null;
      seen |= 1 << k;
      let v: unknown;
      if (k === 7) {
        if (!this.readValue(b, e)) return null;
        v = this.value;
      } else {
        v = this.scalar(b, e, k === 3 || k === 4 || k === 5 || k === 6);
        if (v === undefined) return null;
      }
      switch (k) {
        case 0: o.index = v; break;
        case 1: o.time = v; break;
        case 2: o.process = v; break;
        case 3: o.type = v; break;
        case 4: o.f = v; break;
        case 5: o.key = v; break;
        case 6: o.error = v; break;
        default: o.value = v as ValueRecord;
      }
      const c = b[this.pos++];
      if (c === CLOSE) return this.pos === e ? o : null;
      if (c !== COMMA) return null;
    }
  }

  private readValue(b: Buffer, e: number): boolean {
    const v = this.value;
    v.owner = v.fence = v.ttl_ms = v.queued_ms = v.released = v.data = undefined;
    if (b[this.pos++] !== OPEN) return false;
    if (b[this.pos] === CLOSE) {
      this.pos++;
      return true;
    }
    let seen = 0;
    for (;;) {
      const k = this.keyOf(b, e, VALUE);
      if (k === -2) return false;
      // A field the checker does not read is checked as a plain value and dropped.
      const x = this.scalar(b, e, false);
      if (x === undefined) return false;
      if (k >= 0) {
        if ((seen & (1 << k)) !== 0) return false;
        seen |= 1 << k;
        switch (k) {
          case 0: v.owner = x; break;
          case 1: v.fence = x; break;
          case 2: v.ttl_ms = x; break;
          case 3: v.queued_ms = x; break;
          case 4: v.released = x; break;
          default: v.data = x;
        }
      }
      const c = b[this.pos++];
      if (c === CLOSE) return true;
      if (c !== COMMA) return false;
    }
  }

  /** A key and its colon: its place in `known`, -1 for another plain key, -2: not a plain key. */
  private keyOf(b: Buffer, e: number, known: readonly string[]): number {
    if (!this.string(b, e) || b[this.pos++] !== COLON) return -2;
    const s = this.from, len = this.to - s;
    for (let k = 0; k < known.length; k++) {
      const n = known[k];
      if (n.length !== len) continue;
      let i = 0;
      while (i < len && n.charCodeAt(i) === b[s + i]) i++;
      if (i === len) return k;
    }
    return known === TOP ? -2 : -1;
  }
}

/**
 * A resource.ndjson line of exactly the resource's layout (resource/decision-log.ts:
 * the contract's fields in its order, `data` a plain string, integer or null), as a
 * fresh object of the same fields in the same order as JSON.parse's; null: any
 * other line, for JSON.parse and the reader's checks.
 */
export class DecisionLineReader extends Cursor {
  read(b: Buffer, s: number, e: number): ResourceDecision | null {
    if (b[e - 1] !== CLOSE) return null;
    this.pos = s;
    if (!this.word(b, e, `{"seq":`)) return null;
    const seq = this.scalar(b, e, false);
    if (!(typeof seq === "number" && seq >= 1) || !this.word(b, e, `,"time":`)) return null;
    const time = this.scalar(b, e, false);
    if (!(typeof time === "number" && time >= 0) || !this.word(b, e, `,"op":`)) return null;
    const op = this.scalar(b, e, true);
    if ((op !== "write" && op !== "read") || !this.word(b, e, `,"key":`)) return null;
    const key = this.scalar(b, e, true);
    if (typeof key !== "string" || !this.word(b, e, `,"process":`)) return null;
    const process = this.scalar(b, e, false);
    if (typeof process !== "number" || !this.word(b, e, `,"owner":`)) return null;
    const owner = this.scalar(b, e, false);
    if (typeof owner !== "string" || !this.word(b, e, `,"fence":`)) return null;
    const fence = this.scalar(b, e, false);
    if ((fence !== null && typeof fence !== "number") || !this.word(b, e, `,"max_before":`)) return null;
    const maxBefore = this.scalar(b, e, false);
    if ((maxBefore !== null && typeof maxBefore !== "number") || !this.word(b, e, `,"accepted":`)) return null;
    const accepted = this.scalar(b, e, false);
    if (typeof accepted !== "boolean" || !this.word(b, e, `,"data":`)) return null;
    const data = this.scalar(b, e, false);
    if (data === undefined || typeof data === "boolean" || !this.word(b, e, `,"fencing":`)) return null;
    const fencing = this.scalar(b, e, false);
    if (typeof fencing !== "boolean" || this.pos !== e - 1) return null;
    return { seq, time, op, key, process, owner, fence, max_before: maxBefore, accepted, data, fencing };
  }
}
