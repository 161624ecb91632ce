// A few top-level fields of a history or resource-log line, read straight from its
// bytes. The report of a large run needs the time, process, type and f of every
// event but the rest of only a few; JSON.parse would build every nested value of
// millions of lines only to drop it. The lines were validated by the checker's pass
// before the report is made; anything this reader does not expect (an escape in a
// string it wants, a number that is not a plain integer) falls back to JSON.parse.
import { FAIL_TYPE, INFO_TYPE, INVOKE_TYPE, OK_TYPE, type EventFields } from "../store/event-fields.ts";

export { FAIL_TYPE, INFO_TYPE, INVOKE_TYPE, OK_TYPE };

/** What the overview reads of an event: the head of the checker's EventFields. */
export type EventHead = Pick<EventFields, "index" | "time" | "process" | "nemesis" | "type" | "f" | "error">;

export const emptyHead = (): EventHead => ({ index: 0, time: 0, process: 0, nemesis: false, type: 0, f: "", error: undefined });

const QUOTE = 34, BACKSLASH = 92, OPEN = 123, CLOSE = 125, OPEN_ARR = 91, CLOSE_ARR = 93, COMMA = 44, COLON = 58, MINUS = 45;
const ZERO = 48, NINE = 57;

const F_NAMES = ["acquire", "renew", "release", "write", "read", "invoke", "ok", "fail", "info", "nemesis", "stale-fence"];

function skipWs(b: Buffer, i: number, e: number): number {
  while (i < e) {
    const c = b[i];
    if (c !== 32 && c !== 9 && c !== 13 && c !== 10) break;
    i++;
  }
  return i;
}

/** `i` at an opening quote; the index after the closing one, or -1. */
function skipString(b: Buffer, i: number, e: number): number {
  for (i++; i < e; i++) {
    const c = b[i];
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return -1;
}

function skipValue(b: Buffer, i: number, e: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i, e);
  if (c === OPEN || c === OPEN_ARR) {
    let depth = 0;
    while (i < e) {
      const d = b[i];
      if (d === QUOTE) {
        i = skipString(b, i, e);
        if (i < 0) return -1;
        continue;
      }
      if (d === OPEN || d === OPEN_ARR) depth++;
      else if ((d === CLOSE || d === CLOSE_ARR) && --depth === 0) return i + 1;
      i++;
    }
    return -1;
  }
  while (i < e) {
    const d = b[i];
    if (d === COMMA || d === CLOSE || d === CLOSE_ARR || d === 32 || d === 9 || d === 13 || d === 10) break;
    i++;
  }
  return i;
}

const same = (b: Buffer, s: number, len: number, name: string): boolean => {
  if (len !== name.length) return false;
  for (let k = 0; k < len; k++) if (b[s + k] !== name.charCodeAt(k)) return false;
  return true;
};

/** A plain string value's text (no escapes), interned for the few names that recur; undefined: not one. */
function stringAt(b: Buffer, s: number, e: number): string | undefined {
  if (b[s] !== QUOTE) return undefined;
  let i = s + 1;
  while (i < e && b[i] !== QUOTE && b[i] !== BACKSLASH) i++;
  if (i >= e || b[i] !== QUOTE) return undefined;
  const len = i - s - 1;
  for (const n of F_NAMES) if (same(b, s + 1, len, n)) return n;
  return b.toString("utf8", s + 1, i);
}

/** A non-negative (or negative) plain integer, or NaN. */
function intAt(b: Buffer, s: number, e: number): number {
  let i = s, neg = false, v = 0;
  if (b[i] === MINUS) { neg = true; i++; }
  const first = i;
  for (; i < e; i++) {
    const c = b[i];
    if (c < ZERO || c > NINE) break;
    v = v * 10 + (c - ZERO);
  }
  if (i === first || i - first > 15) return NaN;
  const c = i < e ? b[i] : COMMA;
  if (c !== COMMA && c !== CLOSE && c !== 32) return NaN;
  return neg ? -v : v;
}

const typeCode = (t: unknown): number =>
  t === "invoke" ? INVOKE_TYPE : t === "ok" ? OK_TYPE : t === "fail" ? FAIL_TYPE : t === "info" ? INFO_TYPE : -1;

// Bytes of the usual layout's keys, compared one by one inline below: a loop over
// an array per key costs three times as much on two million lines.
const LBRACE = OPEN, Q = QUOTE, C = COMMA, K = COLON;

/**
 * The layout every writer of this project uses, `{"index":..,"time":..,"process":..,
 * "type":"..","f":"..",` then the rest, read straight through. false: another
 * layout, or a failed write (whose error is further on).
 */
function readUsualHead(b: Buffer, s: number, e: number, out: EventHead): boolean {
  // {"index":
  if (e - s < 60 || b[s] !== LBRACE || b[s + 1] !== Q || b[s + 2] !== 105 || b[s + 3] !== 110 || b[s + 4] !== 100 || b[s + 5] !== 101 ||
    b[s + 6] !== 120 || b[s + 7] !== Q || b[s + 8] !== K) return false;
  let i = s + 9, v = 0, c = b[i], start = i;
  while (c >= ZERO && c <= NINE) { v = v * 10 + (c - ZERO); c = b[++i]; }
  if (i === start || i - start > 15) return false;
  out.index = v;
  // ,"time":
  if (c !== C || b[i + 1] !== Q || b[i + 2] !== 116 || b[i + 3] !== 105 || b[i + 4] !== 109 || b[i + 5] !== 101 || b[i + 6] !== Q || b[i + 7] !== K) return false;
  i += 8; v = 0; c = b[i]; start = i;
  while (c >= ZERO && c <= NINE) { v = v * 10 + (c - ZERO); c = b[++i]; }
  if (i === start || i - start > 15) return false;
  out.time = v;
  // ,"process":
  if (c !== C || b[i + 1] !== Q || b[i + 2] !== 112 || b[i + 3] !== 114 || b[i + 4] !== 111 || b[i + 5] !== 99 || b[i + 6] !== 101 ||
    b[i + 7] !== 115 || b[i + 8] !== 115 || b[i + 9] !== Q || b[i + 10] !== K) return false;
  i += 11; c = b[i];
  if (c === Q) {
    // "nemesis"
    if (b[i + 1] !== 110 || b[i + 2] !== 101 || b[i + 3] !== 109 || b[i + 4] !== 101 || b[i + 5] !== 115 || b[i + 6] !== 105 || b[i + 7] !== 115 || b[i + 8] !== Q) return false;
    out.nemesis = true;
    out.process = NaN;
    i += 9;
    c = b[i];
  } else {
    v = 0; start = i;
    while (c >= ZERO && c <= NINE) { v = v * 10 + (c - ZERO); c = b[++i]; }
    if (i === start || i - start > 15) return false;
    out.nemesis = false;
    out.process = v;
  }
  // ,"type":"
  if (c !== C || b[i + 1] !== Q || b[i + 2] !== 116 || b[i + 3] !== 121 || b[i + 4] !== 112 || b[i + 5] !== 101 || b[i + 6] !== Q || b[i + 7] !== K || b[i + 8] !== Q) return false;
  i += 9;
  const t0 = i;
  while (i < e && b[i] !== Q && b[i] !== BACKSLASH) i++;
  const tl = i - t0;
  out.type = tl === 6 && b[t0] === 105 && b[t0 + 1] === 110 && b[t0 + 2] === 118 && b[t0 + 3] === 111 && b[t0 + 4] === 107 && b[t0 + 5] === 101 ? INVOKE_TYPE
    : tl === 2 && b[t0] === 111 && b[t0 + 1] === 107 ? OK_TYPE
      : tl === 4 && b[t0] === 102 && b[t0 + 1] === 97 && b[t0 + 2] === 105 && b[t0 + 3] === 108 ? FAIL_TYPE
        : tl === 4 && b[t0] === 105 && b[t0 + 1] === 110 && b[t0 + 2] === 102 && b[t0 + 3] === 111 ? INFO_TYPE : -1;
  // ","f":"
  if (out.type < 0 || b[i] !== Q || b[i + 1] !== C || b[i + 2] !== Q || b[i + 3] !== 102 || b[i + 4] !== Q || b[i + 5] !== K || b[i + 6] !== Q) return false;
  i += 7;
  const f0 = i;
  while (i < e && b[i] !== Q && b[i] !== BACKSLASH) i++;
  if (i >= e || b[i] !== Q || (b[i + 1] !== C && b[i + 1] !== CLOSE)) return false;
  out.f = fName(b, f0, i);
  out.error = undefined;
  return !(out.type === FAIL_TYPE && out.f === "write");
}

/** The f names that fill a history, without decoding them; others are decoded. */
function fName(b: Buffer, s: number, e: number): string {
  const len = e - s, c = b[s];
  if (len === 7 && c === 97 && same(b, s, 7, "acquire")) return "acquire";
  if (len === 7 && c === 114 && same(b, s, 7, "release")) return "release";
  if (len === 5 && c === 119 && same(b, s, 5, "write")) return "write";
  if (len === 5 && c === 114 && same(b, s, 5, "renew")) return "renew";
  if (len === 4 && c === 114 && same(b, s, 4, "read")) return "read";
  return b.toString("utf8", s, e);
}

/**
 * Fills `out` from the event line `b[s, e)`. The error is read only where the
 * overview uses it (a failed write: stale fence or not), so most lines are left
 * after their first few fields.
 */
export function readEventHead(b: Buffer, s: number, e: number, out: EventHead): void {
  if (readUsualHead(b, s, e, out)) return;
  let i = skipWs(b, s, e);
  if (b[i] !== OPEN) return fromJson(b, s, e, out);
  let have = 0;
  out.error = undefined;
  i++;
  for (;;) {
    i = skipWs(b, i, e);
    if (b[i] === CLOSE) break;
    if (b[i] === COMMA) i = skipWs(b, i + 1, e);
    if (b[i] !== QUOTE) return fromJson(b, s, e, out);
    const ks = i + 1;
    const kEnd = skipString(b, i, e);
    if (kEnd < 0) return fromJson(b, s, e, out);
    const klen = kEnd - 1 - ks;
    i = skipWs(b, kEnd, e);
    if (b[i] !== COLON) return fromJson(b, s, e, out);
    i = skipWs(b, i + 1, e);
    let bit = 0;
    if (same(b, ks, klen, "time")) { out.time = intAt(b, i, e); bit = 1; if (Number.isNaN(out.time)) return fromJson(b, s, e, out); }
    else if (same(b, ks, klen, "index")) { out.index = intAt(b, i, e); bit = 2; if (Number.isNaN(out.index)) return fromJson(b, s, e, out); }
    else if (same(b, ks, klen, "process")) {
      bit = 4;
      if (b[i] === QUOTE) {
        if (stringAt(b, i, e) !== "nemesis") return fromJson(b, s, e, out);
        out.nemesis = true;
        out.process = NaN;
      } else {
        out.nemesis = false;
        out.process = intAt(b, i, e);
        if (Number.isNaN(out.process)) return fromJson(b, s, e, out);
      }
    } else if (same(b, ks, klen, "type")) { out.type = typeCode(stringAt(b, i, e)); bit = 8; if (out.type < 0) return fromJson(b, s, e, out); }
    else if (same(b, ks, klen, "f")) { const f = stringAt(b, i, e); if (f === undefined) return fromJson(b, s, e, out); out.f = f; bit = 16; }
    else if (same(b, ks, klen, "error")) { const err = stringAt(b, i, e); if (err === undefined) return fromJson(b, s, e, out); out.error = err; bit = 32; }
    have |= bit;
    if ((have & 31) === 31 && (have & 32 || out.type !== FAIL_TYPE || out.f !== "write")) return;
    i = skipValue(b, i, e);
    if (i < 0) return fromJson(b, s, e, out);
  }
  if ((have & 31) !== 31) fromJson(b, s, e, out);
}

function fromJson(b: Buffer, s: number, e: number, out: EventHead): void {
  const o = JSON.parse(b.toString("utf8", s, e)) as Record<string, unknown>;
  out.index = Number(o.index);
  out.time = Number(o.time);
  out.nemesis = o.process === "nemesis";
  out.process = out.nemesis ? NaN : Number(o.process);
  out.type = typeCode(o.type);
  out.f = String(o.f);
  out.error = typeof o.error === "string" ? o.error : undefined;
}

/** `seq` and `time` of a resource-log line, in `out[0]` and `out[1]`. */
export function readDecisionHead(b: Buffer, s: number, e: number, out: [number, number]): void {
  let i = skipWs(b, s, e);
  let have = 0;
  if (b[i] === OPEN) {
    i++;
    while (have !== 3) {
      i = skipWs(b, i, e);
      if (b[i] === COMMA) i = skipWs(b, i + 1, e);
      if (b[i] !== QUOTE) break;
      const ks = i + 1;
      const kEnd = skipString(b, i, e);
      if (kEnd < 0) break;
      i = skipWs(b, kEnd, e);
      if (b[i] !== COLON) break;
      i = skipWs(b, i + 1, e);
      const klen = kEnd - 1 - ks;
      if (same(b, ks, klen, "seq")) { out[0] = intAt(b, i, e); have |= 1; }
      else if (same(b, ks, klen, "time")) { out[1] = intAt(b, i, e); have |= 2; }
      i = skipValue(b, i, e);
      if (i < 0) break;
    }
  }
  if (have === 3 && !Number.isNaN(out[0]) && !Number.isNaN(out[1])) return;
  const o = JSON.parse(b.toString("utf8", s, e)) as Record<string, unknown>;
  out[0] = Number(o.seq);
  out[1] = Number(o.time);
}

/** The whole line, parsed: for the few the report keeps. */
export const parseLine = <T>(b: Buffer, s: number, e: number): T => JSON.parse(b.toString("utf8", s, e)) as T;
