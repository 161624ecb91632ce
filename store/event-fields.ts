// What the checker reads of a history event, checked against docs/history-format.md
// and copied out of the parsed line in one pass. A parsed line is an object of one
// of many shapes, so every property read of it is a slow one; reading each once,
// into a record of one fixed shape that is reused for every line, keeps the check
// of a two-million-line history close to the cost of parsing it.
import { NOTICES, type HistoryEvent } from "./events.ts";

/** `type` codes: a completion's code is its outcome (ok, fail, info); then invoke. */
export const OK_TYPE = 0;
export const FAIL_TYPE = 1;
export const INFO_TYPE = 2;
export const INVOKE_TYPE = 3;
/** A notice (format 2): what the lock library told its user; no operation, no process state. */
export const NOTICE_TYPE = 4;
const TYPE_NAMES = ["ok", "fail", "info", "invoke", "notice"] as const;

export interface EventFields {
  index: number;
  time: number;
  /** NaN for the nemesis. */
  process: number;
  nemesis: boolean;
  /** A notice line (type NOTICE_TYPE): `f` is lost, suspended or reconnected, `owner` from its value. */
  notice: boolean;
  type: number;
  f: string;
  key: string | undefined;
  error: string | undefined;
  /** From `value`: the owner (undefined: none), fence and ttl_ms (NaN: none or not a valid one), data. */
  owner: string | undefined;
  fence: number;
  ttl: number;
  data: unknown;
  /** A release that answered `released: false`. */
  notReleased: boolean;
  /** An acquire's `queued_ms`: when its client says its place in the lock's queue was taken (NaN: none). */
  queued: number;
  /** An acquire's `validity_ms`: what its client says was left of the lease when it returned (NaN: none; may be negative). */
  validity: number;
  /** Format 2 lock kinds: an acquire's `mode` (MODE_READ, MODE_WRITE; 0: none). */
  mode: number;
  /** An acquire's or release's `depth` (reentrant: 1 for the outermost; NaN: none). */
  depth: number;
  /** An acquire completion's `behind`: the owner of the queue entry it last waited behind (undefined: none said). */
  behind: string | undefined;
}

/** `mode` codes of a read-write lock's acquire. */
export const MODE_READ = 1;
export const MODE_WRITE = 2;
const modeOf = (v: unknown): number => (v === "read" ? MODE_READ : v === "write" ? MODE_WRITE : 0);

export const typeName = (type: number): string => TYPE_NAMES[type];

export function emptyFields(): EventFields {
  return { index: 0, time: NaN, process: NaN, nemesis: false, notice: false, type: 0, f: "", key: undefined, error: undefined, owner: undefined, fence: NaN, ttl: NaN, data: undefined, notReleased: false, queued: NaN, validity: NaN, mode: 0, depth: NaN, behind: undefined };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isNat = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isFence = (v: unknown): boolean => v === null || Number.isSafeInteger(v);
const fenceOf = (v: unknown): number => (typeof v === "number" && Number.isSafeInteger(v) ? v : NaN);
const finiteOf = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : NaN);
const ttlOf = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : NaN);

export function typeCode(t: unknown): number {
  switch (t) {
    case "invoke": return INVOKE_TYPE;
    case "ok": return OK_TYPE;
    case "fail": return FAIL_TYPE;
    case "info": return INFO_TYPE;
    case "notice": return NOTICE_TYPE;
    default: return -1;
  }
}

/** The client operations docs/history-format.md defines, in the order readers and the model number them (clientOp). */
export const CLIENT_OPS = ["acquire", "renew", "release", "write", "read"] as const;

/** `f`'s place in CLIENT_OPS, -1 when it is no client operation: a switch, for the readers' and the model's hot loops. */
export function clientOp(f: string): number {
  switch (f) {
    case "acquire": return 0;
    case "renew": return 1;
    case "release": return 2;
    case "write": return 3;
    case "read": return 4;
    default: return -1;
  }
}
const isClientOp = (f: string): boolean => clientOp(f) >= 0;

/**
 * Checks a parsed line as an event of docs/history-format.md and fills `out` with
 * its fields. Returns what is wrong with it (for a message naming its line), or
 * null.
 */
export function readFields(o: unknown, out: EventFields): string | null {
  if (!isObj(o)) return "not a JSON object";
  const index = o.index;
  if (!isNat(index)) return `"index" must be an integer >= 0`;
  const time = o.time;
  if (!isNat(time)) return `"time" must be an integer >= 0`;
  const type = typeCode(o.type);
  if (type < 0) return `"type" must be one of invoke, ok, fail, info, notice`;
  if (type === NOTICE_TYPE) return readNotice(o, index, time, out);
  const process = o.process;
  const nemesis = process === "nemesis";
  if (nemesis) {
    if (type !== INFO_TYPE) return `a nemesis event must have "type" info`;
  } else if (!Number.isSafeInteger(process)) return `"process" must be an integer or "nemesis"`;
  const f = o.f;
  if (typeof f !== "string") return `"f" must be a string`;
  const key = o.key;
  if (key !== undefined && typeof key !== "string") return `"key" must be a string`;
  const v = o.value;
  if (v !== undefined && !isObj(v)) return `"value" must be an object`;
  const error = o.error;
  if (error !== undefined && typeof error !== "string") return `"error" must be a string`;
  setHead(out, index, time, nemesis ? NaN : (process as number), nemesis, type, f, key, error);
  if (nemesis) {
    clearValue(out);
    return null;
  }
  if (!isClientOp(f)) return `"f" ${JSON.stringify(f)} is not a client operation (${CLIENT_OPS.join(", ")})`;
  if (type === INVOKE_TYPE && key === undefined) return `a client invoke needs "key" (the lock name)`;
  clearValue(out);
  return readValue(f, type, v ?? NO_VALUE, out);
}

/**
 * A notice line: not an operation, so none of the rules of invokes and
 * completions; a client's process, `f` one of NOTICES, `value.owner` a string or
 * null when the library named no hold.
 */
function readNotice(o: Obj, index: number, time: number, out: EventFields): string | null {
  const { process, f, key, value } = o;
  if (!Number.isSafeInteger(process)) return `a notice's "process" must be an integer (the client's process)`;
  if (typeof f !== "string" || !(NOTICES as readonly string[]).includes(f)) return `a notice's "f" must be one of ${NOTICES.join(", ")}`;
  if (key !== undefined && typeof key !== "string") return `"key" must be a string`;
  if (value !== undefined && !isObj(value)) return `"value" must be an object`;
  const owner = (value as Obj | undefined)?.owner;
  if (owner !== undefined && owner !== null && typeof owner !== "string") return `a notice's "value.owner" must be a string or null`;
  setHead(out, index, time, process as number, false, NOTICE_TYPE, f, key, undefined);
  clearValue(out);
  out.owner = str(owner);
  return null;
}

const NO_VALUE: Obj = Object.freeze({});
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/**
 * The value fields the checker relies on, for the operations docs/history-format.md
 * defines: checked, and copied into `out`. Only the fields this operation has are
 * read.
 */
function readValue(f: string, type: number, v: Obj, out: EventFields): string | null {
  switch (f) {
    case "acquire":
      if (type === INVOKE_TYPE) return readKind(v, out) ?? readLease(v, out);
      if (type !== OK_TYPE) return readWithdrawn(v, out);
      out.queued = ttlOf(v.queued_ms);
      out.validity = finiteOf(v.validity_ms);
      return readKind(v, out) ?? readBehind(v, out) ?? readHold(v, out, "acquire ok");
    case "renew":
      if (type === OK_TYPE) return readLease(v, out);
      return type === INVOKE_TYPE ? readHold(v, out, "renew invoke") : null;
    case "release":
    case "write": {
      if (type === OK_TYPE && f === "release") out.notReleased = v.released === false;
      if (type !== INVOKE_TYPE) return null;
      if (f === "write") out.data = v.data;
      else if (v.depth !== undefined) {
        if (!isDepth(v.depth)) return DEPTH_PROBLEM;
        out.depth = v.depth as number;
      }
      return readHold(v, out, `${f} invoke`, false);
    }
    default: {
      // read: its ok's fence is checked, but the checker needs only the invoke's.
      if (type !== INVOKE_TYPE) return type === OK_TYPE ? fenceProblem(v.fence) : null;
      const fence = v.fence;
      out.owner = str(v.owner);
      out.fence = fenceOf(fence);
      return fenceProblem(fence);
    }
  }
}

const isDepth = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 1;
const DEPTH_PROBLEM = `"value.depth" must be an integer >= 1`;

/** An acquire's lock-kind fields (format 2): `mode` and `depth`, where present. */
function readKind(v: Obj, out: EventFields): string | null {
  const { mode, depth } = v;
  if (mode !== undefined) {
    out.mode = modeOf(mode);
    if (out.mode === 0) return `"value.mode" must be "read" or "write"`;
  }
  if (depth !== undefined) {
    if (!isDepth(depth)) return DEPTH_PROBLEM;
    out.depth = depth as number;
  }
  return null;
}

/** `behind`, where an acquire's completion says whose queue entry it waited behind. */
function readBehind(v: Obj, out: EventFields): string | null {
  const behind = v.behind;
  if (behind === undefined) return null;
  if (typeof behind !== "string") return `"value.behind" must be a string (an owner)`;
  out.behind = behind;
  return null;
}

/** A failed or unknown acquire: `owner` names the queue entry a withdrawn one was made for, `behind` whom it waited behind. */
function readWithdrawn(v: Obj, out: EventFields): string | null {
  if (v === NO_VALUE) return null;
  const owner = v.owner;
  if (owner !== undefined && typeof owner !== "string") return `"value.owner" must be a string`;
  out.owner = owner as string | undefined;
  return readBehind(v, out);
}

/** A value that carries only a lease (an acquire's invoke, a renew's ok). */
function readLease(v: Obj, out: EventFields): string | null {
  const ttl = v.ttl_ms;
  out.ttl = ttlOf(ttl);
  return ttlProblem(ttl);
}

/** A value that names a hold: its owner and fence, and its lease where it has one. */
function readHold(v: Obj, out: EventFields, what: string, withLease = true): string | null {
  const { owner, fence } = v;
  out.owner = str(owner);
  out.fence = fenceOf(fence);
  return ownerProblem(owner, what) ?? fenceProblem(fence) ?? (withLease ? readLease(v, out) : null);
}

/** The fields of an event outside its `value`. */
export function setHead(out: EventFields, index: number, time: number, process: number, nemesis: boolean, type: number, f: string, key: string | undefined, error: string | undefined): void {
  out.index = index;
  out.time = time;
  out.process = process;
  out.nemesis = nemesis;
  out.notice = type === NOTICE_TYPE;
  out.type = type;
  out.f = f;
  out.key = key;
  out.error = error;
}

/** The fields read from `value`, as for an event without one. */
export function clearValue(out: EventFields): void {
  out.owner = undefined;
  out.fence = NaN;
  out.ttl = NaN;
  out.data = undefined;
  out.notReleased = false;
  out.queued = NaN;
  out.validity = NaN;
  out.mode = 0;
  out.depth = NaN;
  out.behind = undefined;
}

const ownerProblem = (owner: unknown, what: string): string | null =>
  typeof owner === "string" ? null : `${/^[aeiou]/.test(what) ? "an" : "a"} ${what} needs "value.owner" (a string)`;
const fenceProblem = (fence: unknown): string | null =>
  fence === undefined || isFence(fence) ? null : `"value.fence" must be an integer or null`;
const ttlProblem = (ttl: unknown): string | null =>
  ttl === undefined || (typeof ttl === "number" && Number.isFinite(ttl) && ttl >= 0) ? null : `"value.ttl_ms" must be a number >= 0`;

/** The fields of an event already in memory (read whole, or handed in by a test), unchecked. */
export function fieldsOf(e: HistoryEvent, out: EventFields): EventFields {
  const v = e.value;
  const nemesis = e.process === "nemesis";
  setHead(out, e.index, e.time, nemesis ? NaN : (e.process as number), nemesis, typeCode(e.type), e.f, e.key, e.error);
  out.owner = typeof v?.owner === "string" ? v.owner : undefined;
  out.fence = fenceOf(v?.fence);
  out.ttl = ttlOf(v?.ttl_ms);
  out.data = v?.data;
  out.notReleased = e.f === "release" && v?.released === false;
  out.queued = ttlOf(v?.queued_ms);
  out.validity = e.f === "acquire" ? finiteOf(v?.validity_ms) : NaN;
  out.mode = modeOf(v?.mode);
  out.depth = isDepth(v?.depth) ? (v!.depth as number) : NaN;
  out.behind = typeof v?.behind === "string" ? v.behind : undefined;
  return out;
}
