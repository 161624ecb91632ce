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

import { clearValue, CLIENT_OPS, setHead, FAIL_TYPE, INFO_TYPE, INVOKE_TYPE, OK_TYPE, MODE_READ, MODE_WRITE, type EventFields } from "./event-fields.ts";
import type { ResourceDecision } from "./events.ts";

const QUOTE = 34, BACKSLASH = 92, MINUS = 45, ZERO = 48, NINE = 57, COMMA = 44, COLON = 58, OPEN = 123, CLOSE = 125;
/** A literal's bytes (ASCII), compared with a line's bytes as they are (word); AT_X: a field's start, its comma and key. */
const bytesOf = (w: string): Uint8Array => Uint8Array.from(w, (c) => c.charCodeAt(0));
const OP_BYTES = CLIENT_OPS.map(bytesOf);
/** The `type` words by their codes (event-fields.ts): ok, fail, info, invoke. */
const TYPE_BYTES = ["ok", "fail", "info", "invoke"].map(bytesOf);
const TRUE_WORD = bytesOf("true");
const FALSE_WORD = bytesOf("false");
const NULL_WORD = bytesOf("null");
/** Digits of an integer read here: fewer than 16 is always a safe integer. */
const MAX_DIGITS = 15;

/** A parsed line as readFields reads it; absent fields are undefined. */
export interface LineRecord {
  index: unknown; time: unknown; process: unknown; type: unknown; f: unknown; key: unknown; error: unknown;
  value: ValueRecord | undefined;
}
export interface ValueRecord { owner: unknown; fence: unknown; ttl_ms: unknown; queued_ms: unknown; released: unknown; data: unknown; validity_ms: unknown; mode: unknown; depth: unknown; behind: unknown }

const TOP = ["index", "time", "process", "type", "f", "key", "error", "value"] as const;
const VALUE = ["owner", "fence", "ttl_ms", "queued_ms", "released", "data", "validity_ms", "mode", "depth", "behind"] as const;
/** A field's start in the writers' layout: `{"index":` first, `,"time":` after another field. */
const at = (key: string, first = false): Uint8Array => bytesOf(`${first ? "{" : ","}"${key}":`);
const [AT_INDEX, AT_TIME, AT_PROCESS, AT_TYPE, AT_F, AT_KEY, AT_ERROR, AT_VALUE] = TOP.map((k, i) => at(k, i === 0));
const [AT_SEQ, AT_OP, AT_OWNER, AT_FENCE, AT_MAX_BEFORE, AT_ACCEPTED, AT_DATA, AT_FENCING, AT_ORDER] =
  ["seq", "op", "owner", "fence", "max_before", "accepted", "data", "fencing", "order"].map((k, i) => at(k, i === 0));
/** Each of VALUE as a line has it, `"owner":`, and by its first letter (the first key of a letter; keyOf finds the others, "depth" after "data"). */
const VALUE_KEYS = VALUE.map((k) => bytesOf(`"${k}":`));
const VALUE_BY_LETTER: number[] = [];
VALUE.forEach((k, i) => (VALUE_BY_LETTER[k.charCodeAt(0)] ??= i));
const isDepth = (v: unknown): boolean => typeof v === "number" && v >= 1;

/** FNV-1a of the bytes b[s, e): the same for a string of those (ASCII) characters (hashOfString). */
function hashOf(b: Buffer, s: number, e: number): number {
  let h = 0x811c9dc5;
  for (let i = s; i < e; i++) h = Math.imul(h ^ b[i], 0x01000193);
  return h;
}

/** Whether the string `n` is the ASCII bytes b[s, s + n.length). */
function sameAs(n: string, b: Buffer, s: number): boolean {
  for (let i = 0; i < n.length; i++) if (n.charCodeAt(i) !== b[s + i]) return false;
  return true;
}

/**
 * Strings that recur (types, operations, keys, errors), kept once and found by a
 * hash of their bytes: a run of thousands of keys makes none of them afresh per
 * line, and a lookup costs the same for the two-thousandth key as for the first.
 */
class Names {
  /** The place in the table of the name `get` gave last, for as long as the reader lives; -1: made afresh (the table is full). */
  last = -1;
  private readonly names: string[] = [];
  private readonly hashes: number[] = [];
  private slots = new Int32Array(128).fill(-1);
  constructor(initial: readonly string[]) {
    for (const n of initial) this.get(Buffer.from(n, "latin1"), 0, n.length, hashOf(Buffer.from(n, "latin1"), 0, n.length));
  }
  /** The name of bytes b[s, e), whose hashOf is `hash`. */
  get(b: Buffer, s: number, e: number, hash: number): string {
    const len = e - s;
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const at = this.slots[slot];
      if (at < 0) break;
      const n = this.names[at];
      if (this.hashes[at] === hash && n.length === len && sameAs(n, b, s)) {
        this.last = at;
        return n;
      }
    }
    const name = b.toString("latin1", s, e);
    // Names past these many are made afresh: a field that never repeats must not grow the table without end.
    this.last = this.names.length < MAX_NAMES ? this.names.length : -1;
    if (this.last >= 0) this.add(name, hash);
    return name;
  }
  private add(name: string, hash: number): void {
    const id = this.names.length;
    this.names.push(name);
    this.hashes.push(hash);
    if (2 * (id + 1) > this.slots.length) {
      this.slots = new Int32Array(this.slots.length * 2).fill(-1);
      for (let k = 0; k <= id; k++) this.place(k);
    } else this.place(id);
  }
  private place(id: number): void {
    const mask = this.slots.length - 1;
    let slot = this.hashes[id] & mask;
    while (this.slots[slot] >= 0) slot = (slot + 1) & mask;
    this.slots[slot] = id;
  }
}
const MAX_NAMES = 1 << 16;

/**
 * The last string seen per hash bucket: an owner is named by its acquire's ok and
 * again by the renews, writes and release of its hold a few lines later, so these
 * lines hand over the string already made (and the checker's lookup of the owner
 * then compares one string with itself).
 */
class Recent {
  private readonly strings: string[] = new Array<string>(RECENT).fill("");
  /** The string of bytes b[s, e), whose hashOf is `hash`. */
  get(b: Buffer, s: number, e: number, hash: number): string {
    const slot = hash & (RECENT - 1);
    const n = this.strings[slot];
    if (n.length === e - s && sameAs(n, b, s)) return n;
    return (this.strings[slot] = b.toString("latin1", s, e));
  }
}
const RECENT = 4096;

/** How `scalar` makes a string: afresh, from Names (it recurs), from Recent (it recurs soon), or not at all (it reads as null). */
const FRESH = 0, NAMED = 1, RECENT_STRING = 2, SKIPPED = 3;

/** Reads plain JSON values from a line's bytes, moving `pos` past each. */
class Cursor {
  protected readonly names = new Names(["invoke", "ok", "fail", "info", "acquire", "renew", "release", "write", "read", "timeout"]);
  protected readonly recent = new Recent();
  protected pos = 0;
  /** Where the last string read starts and ends (its quotes excluded). */
  protected from = 0;
  protected to = 0;
  /** hashOf its bytes. */
  protected hash = 0;

  /** A plain ASCII string without escapes: sets from/to and moves past it. */
  protected string(b: Buffer, e: number): boolean {
    let i = this.pos;
    if (b[i] !== QUOTE) return false;
    const from = ++i;
    // hashOf(b, from, to), in the same pass: a name is then looked up without a second.
    let h = 0x811c9dc5;
    for (; i < e; i++) {
      const c = b[i];
      if (c === QUOTE) {
        this.from = from;
        this.to = i;
        this.hash = h;
        this.pos = i + 1;
        return true;
      }
      h = Math.imul(h ^ c, 0x01000193);
      if (c === BACKSLASH || c < 32 || c > 126) return false;
    }
    return false;
  }

  /** An integer, plain string, true, false or null; undefined: anything else. `strings` says how a string is made (FRESH, NAMED, ...). */
  protected scalar(b: Buffer, e: number, strings: number): unknown {
    let i = this.pos;
    const c = b[i];
    if (c === QUOTE) {
      if (!this.string(b, e)) return undefined;
      switch (strings) {
        case NAMED: return this.names.get(b, this.from, this.to, this.hash);
        case RECENT_STRING: return this.recent.get(b, this.from, this.to, this.hash);
        case SKIPPED: return null;
        default: return b.toString("latin1", this.from, this.to);
      }
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
    if (this.word(b, e, TRUE_WORD)) return true;
    if (this.word(b, e, FALSE_WORD)) return false;
    if (this.word(b, e, NULL_WORD)) return null;
    return undefined;
  }

  protected word(b: Buffer, e: number, w: Uint8Array): boolean {
    const i = this.pos, n = w.length;
    if (i + n > e) return false;
    for (let k = 0; k < n; k++) if (b[i + k] !== w[k]) return false;
    this.pos = i + n;
    return true;
  }
}

export class EventLineReader extends Cursor {
  /** SKIPPED when a string `data` is not wanted (it then reads as null): its string would be made per write for nothing. */
  private readonly dataStrings: number;
  constructor(keepData = true) {
    super();
    this.dataStrings = keepData ? FRESH : SKIPPED;
  }
  /**
   * The key of the line readEvent read last, by its place in this reader's table of
   * names, the same for every line with that key (-1: none): a writer of batches
   * numbers keys by it without hashing the string (event-batch.ts).
   */
  keyName = -1;
  readonly line: LineRecord = { index: undefined, time: undefined, process: undefined, type: undefined, f: undefined, key: undefined, error: undefined, value: undefined };
  private readonly value: ValueRecord = { owner: undefined, fence: undefined, ttl_ms: undefined, queued_ms: undefined, released: undefined, data: undefined, validity_ms: undefined, mode: undefined, depth: undefined, behind: undefined };

  /**
   * The line `b[s, e)` straight into `out`, when it is a client event in the
   * runner's own layout (its keys in the runner's order, plain values) that
   * readFields would accept: `out` then holds what readFields gives for it, and the
   * result is true. False says nothing about the line (`out` is garbage): read it
   * with `read` or JSON.parse, and readFields, which also say what is wrong with it.
   * No record and no number is made on the way: this is the path of nearly every
   * line of a large run.
   */
  readEvent(b: Buffer, s: number, e: number, out: EventFields): boolean {
    const op = this.start(b, s, e, out);
    if (op < 0 || !this.word(b, e, AT_KEY) || !this.string(b, e)) return false;
    out.key = this.names.get(b, this.from, this.to, this.hash);
    this.keyName = this.names.last;
    if (this.word(b, e, AT_ERROR)) {
      if (!this.string(b, e)) return false;
      out.error = this.names.get(b, this.from, this.to, this.hash);
    }
    clearValue(out);
    const type = out.type;
    if (this.word(b, e, AT_VALUE)) {
      if (!this.readValue(b, e)) return false;
    } else this.clearValue();
    if (this.pos !== e - 1 || b[this.pos] !== CLOSE) return false;
    // What readFields' readValue reads of the value, for this operation and type.
    const v = this.value;
    const invoke = type === INVOKE_TYPE, ok = type === OK_TYPE;
    switch (op) {
      case 0: // acquire
        if (invoke) return this.kind(v, out) && this.lease(v.ttl_ms, out);
        if (!ok) {
          // A withdrawn acquire's owner (its queue entry's), and whom it waited behind.
          if (v.owner !== undefined && typeof v.owner !== "string") return false;
          out.owner = v.owner as string | undefined;
          return this.behind(v, out);
        }
        if (typeof v.queued_ms === "number" && v.queued_ms >= 0) out.queued = v.queued_ms;
        if (typeof v.validity_ms === "number") out.validity = v.validity_ms;
        return this.kind(v, out) && this.behind(v, out) && this.hold(v, out) && this.lease(v.ttl_ms, out);
      case 1: // renew
        if (ok) return this.lease(v.ttl_ms, out);
        return !invoke || (this.hold(v, out) && this.lease(v.ttl_ms, out));
      case 2: // release
        if (ok) out.notReleased = v.released === false;
        if (!invoke) return true;
        if (v.depth !== undefined) {
          if (!isDepth(v.depth)) return false;
          out.depth = v.depth as number;
        }
        return this.hold(v, out);
      case 3: // write
        if (!invoke) return true;
        out.data = v.data;
        return this.hold(v, out);
      default: // read
        if (!invoke) return !ok || v.fence === undefined || v.fence === null || typeof v.fence === "number";
        if (typeof v.owner === "string") out.owner = v.owner;
        return this.fence(v.fence, out);
    }
  }

  /**
   * The start of a client event line of the runner's layout (index, time, process,
   * type and f) into `out`, the rest of the line not read, let alone checked: for
   * a reader of lines the checker has already read (the report). False when the
   * line does not start so (`out` is then garbage).
   */
  readStart(b: Buffer, s: number, e: number, out: EventFields): boolean {
    return this.start(b, s, e, out) >= 0;
  }

  /** readStart, giving the operation's place in CLIENT_OPS (-1: false); `key` and `error` are set undefined. */
  private start(b: Buffer, s: number, e: number, out: EventFields): number {
    this.pos = s;
    if (!this.word(b, e, AT_INDEX)) return -1;
    const index = this.natural(b, e);
    if (index < 0 || !this.word(b, e, AT_TIME)) return -1;
    const time = this.natural(b, e);
    if (time < 0 || !this.word(b, e, AT_PROCESS)) return -1;
    const process = this.natural(b, e);
    if (process < 0 || !this.word(b, e, AT_TYPE)) return -1;
    const type = this.typeOf(b, e);
    if (type < 0 || !this.word(b, e, AT_F) || !this.string(b, e)) return -1;
    const op = this.opOf(b);
    if (op < 0) return -1;
    setHead(out, index, time, process, false, type, CLIENT_OPS[op], undefined, undefined);
    return op;
  }

  private clearValue(): void {
    const v = this.value;
    v.owner = v.fence = v.ttl_ms = v.queued_ms = v.released = v.data = v.validity_ms = v.mode = v.depth = v.behind = undefined;
  }

  /** An acquire's `mode` and `depth` (format 2 lock kinds), as readFields' readKind reads them. */
  private kind(v: ValueRecord, out: EventFields): boolean {
    if (v.mode !== undefined) {
      if (v.mode === "read") out.mode = MODE_READ;
      else if (v.mode === "write") out.mode = MODE_WRITE;
      else return false;
    }
    if (v.depth === undefined) return true;
    if (!isDepth(v.depth)) return false;
    out.depth = v.depth as number;
    return true;
  }

  private behind(v: ValueRecord, out: EventFields): boolean {
    if (v.behind === undefined) return true;
    if (typeof v.behind !== "string") return false;
    out.behind = v.behind;
    return true;
  }

  /** A value's owner (a string) and fence, as readFields' readHold reads them; false where it would object. */
  private hold(v: ValueRecord, out: EventFields): boolean {
    if (typeof v.owner !== "string") return false;
    out.owner = v.owner;
    return this.fence(v.fence, out);
  }

  private fence(fence: unknown, out: EventFields): boolean {
    if (typeof fence === "number") out.fence = fence;
    return fence === undefined || fence === null || typeof fence === "number";
  }

  private lease(ttl: unknown, out: EventFields): boolean {
    if (typeof ttl === "number" && ttl >= 0) out.ttl = ttl;
    return ttl === undefined || (typeof ttl === "number" && ttl >= 0);
  }

  /** A non-negative integer of at most MAX_DIGITS digits, without leading zeros, followed by a comma or brace; -1: anything else. */
  private natural(b: Buffer, e: number): number {
    let i = this.pos;
    const first = i;
    let n = 0;
    for (let d = b[i]; d >= ZERO && d <= NINE && i < e; d = b[++i]) n = n * 10 + (d - ZERO);
    const digits = i - first;
    if (digits === 0 || digits > MAX_DIGITS || (digits > 1 && b[first] === ZERO)) return -1;
    const next = b[i];
    if (next !== COMMA && next !== CLOSE) return -1;
    this.pos = i;
    return n;
  }

  /** The last string read as one of CLIENT_OPS, by its place there; -1: anything else. */
  private opOf(b: Buffer): number {
    const s = this.from, len = this.to - s, c = b[s];
    // By length and first letter, then every letter: acquire, renew, release, write, read.
    const op = len === 7 ? (c === 97 ? 0 : c === 114 ? 2 : -1) : len === 5 ? (c === 114 ? 1 : c === 119 ? 3 : -1) : len === 4 && c === 114 ? 4 : -1;
    if (op < 0) return -1;
    const w = OP_BYTES[op];
    for (let k = 1; k < len; k++) if (b[s + k] !== w[k]) return -1;
    return op;
  }

  /** `"invoke"`, `"ok"`, `"fail"` or `"info"` as its type code; -1: anything else. */
  private typeOf(b: Buffer, e: number): number {
    const i = this.pos;
    if (b[i] !== QUOTE) return -1;
    // The word and its closing quote, by their bytes: no string is scanned or made.
    const c = b[i + 1];
    let type = -1, len = 0;
    if (c === 111) { type = OK_TYPE; len = 2; }
    else if (c === 105) { type = b[i + 2] === 110 && b[i + 3] === 118 ? INVOKE_TYPE : INFO_TYPE; len = type === INVOKE_TYPE ? 6 : 4; }
    else if (c === 102) { type = FAIL_TYPE; len = 4; }
    else return -1;
    if (i + len + 2 > e || b[i + len + 1] !== QUOTE) return -1;
    const w = TYPE_BYTES[type];
    for (let k = 1; k < len; k++) if (b[i + 1 + k] !== w[k]) return -1;
    this.pos = i + len + 2;
    return type;
  }

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
        v = this.scalar(b, e, k >= 3 ? NAMED : FRESH);
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
    this.clearValue();
    if (b[this.pos++] !== OPEN) return false;
    if (b[this.pos] === CLOSE) {
      this.pos++;
      return true;
    }
    let seen = 0;
    for (;;) {
      const k = this.valueKey(b, e);
      if (k === -2) return false;
      // A field the checker does not read is checked as a plain value and dropped.
      const x = this.scalar(b, e, k === 0 ? RECENT_STRING : k === 5 ? this.dataStrings : k < 0 ? SKIPPED : FRESH);
      if (x === undefined) return false;
      if (k >= 0) {
        if ((seen & (1 << k)) !== 0) return false;
        seen |= 1 << k;
        switch (k) {
          case 0: v.owner = x; break;
          case 1: v.fence = x; break;
          case 2: v.ttl_ms = x; break;
          case 3: v.queued_ms = x; break;
          case 6: v.validity_ms = x; break;
          case 4: v.released = x; break;
          case 7: v.mode = x; break;
          case 8: v.depth = x; break;
          case 9: v.behind = x; break;
          default: v.data = x;
        }
      }
      const c = b[this.pos++];
      if (c === CLOSE) return true;
      if (c !== COMMA) return false;
    }
  }

  /**
   * A key of `value` and its colon, as keyOf(VALUE) reads it: the runner's keys are
   * told by their first letter and matched by their bytes, quotes and colon
   * included; anything else is read by keyOf.
   */
  private valueKey(b: Buffer, e: number): number {
    const k = VALUE_BY_LETTER[b[this.pos + 1]] ?? -1;
    if (k >= 0 && this.word(b, e, VALUE_KEYS[k])) return k;
    return this.keyOf(b, e, VALUE);
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
 * the contract's fields in its order, `data` a plain string, integer or null,
 * `accepted` true or false, perhaps an integer `order` last), as a
 * fresh object of the same fields in the same order as JSON.parse's; null: any
 * other line, for JSON.parse and the reader's checks.
 */
export class DecisionLineReader extends Cursor {
  read(b: Buffer, s: number, e: number): ResourceDecision | null {
    if (b[e - 1] !== CLOSE) return null;
    this.pos = s;
    if (!this.word(b, e, AT_SEQ)) return null;
    const seq = this.scalar(b, e, FRESH);
    if (!(typeof seq === "number" && seq >= 1) || !this.word(b, e, AT_TIME)) return null;
    const time = this.scalar(b, e, FRESH);
    if (!(typeof time === "number" && time >= 0) || !this.word(b, e, AT_OP)) return null;
    const op = this.scalar(b, e, NAMED);
    if ((op !== "write" && op !== "read") || !this.word(b, e, AT_KEY)) return null;
    const key = this.scalar(b, e, NAMED);
    if (typeof key !== "string" || !this.word(b, e, AT_PROCESS)) return null;
    const process = this.scalar(b, e, FRESH);
    if (typeof process !== "number" || !this.word(b, e, AT_OWNER)) return null;
    const owner = this.scalar(b, e, RECENT_STRING);
    if (typeof owner !== "string" || !this.word(b, e, AT_FENCE)) return null;
    const fence = this.scalar(b, e, FRESH);
    if ((fence !== null && typeof fence !== "number") || !this.word(b, e, AT_MAX_BEFORE)) return null;
    const maxBefore = this.scalar(b, e, FRESH);
    if ((maxBefore !== null && typeof maxBefore !== "number") || !this.word(b, e, AT_ACCEPTED)) return null;
    const accepted = this.scalar(b, e, FRESH);
    if (typeof accepted !== "boolean" || !this.word(b, e, AT_DATA)) return null;
    const data = this.scalar(b, e, FRESH);
    if (data === undefined || typeof data === "boolean" || !this.word(b, e, AT_FENCING)) return null;
    const fencing = this.scalar(b, e, FRESH);
    if (typeof fencing !== "boolean") return null;
    if (this.pos === e - 1) return { seq, time, op, key, process, owner, fence, max_before: maxBefore, accepted, data, fencing };
    // A committed decision's place among its key's (format 2), which a database's resource adds last.
    if (!this.word(b, e, AT_ORDER)) return null;
    const order = this.scalar(b, e, FRESH);
    if (!(typeof order === "number" && order >= 1) || this.pos !== e - 1) return null;
    return { seq, time, op, key, process, owner, fence, max_before: maxBefore, accepted, data, fencing, order };
  }
}
