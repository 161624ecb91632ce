// Reading a run's history.ndjson and resource.ndjson (docs/history-format.md,
// format 1). Every line is checked here, once, so the checker can trust what it
// gets; every error names the file and the 1-based line, as the contract asks.
//
// Speed matters (a 2M-line history must check in at most 1.5x a bare parse loop,
// under 1 GB), so lines are cut by hand from large chunks, the checker's readers
// read lines of the runner's own layout from their bytes without JSON.parse
// (event-line.ts), and the checker takes each event as it is read (`streamHistory`)
// instead of keeping two million objects alive.
import { LOCK_KINDS } from "./events.ts";
import { open, stat, type FileHandle } from "node:fs/promises";
import { basename } from "node:path";
import { BadInput } from "../lib/index.ts";
import { DecisionLineReader, EventLineReader } from "./event-line.ts";
import { emptyFields, fieldsOf, readFields, type EventFields } from "./event-fields.ts";
import { FORMAT_2, READABLE_FORMATS, type HistoryEvent, type HistoryHeader, type ResourceDecision } from "./events.ts";
import { InOrder, StructureCheck } from "./structure.ts";

export interface HistoryFile {
  header: HistoryHeader;
  /** Ordered by (time, index); no notices. */
  events: HistoryEvent[];
  /** The notice lines (format 2), in (time, index) order. */
  notices: HistoryEvent[];
  warnings: string[];
}

export interface ResourceLog {
  /** In file order: the order the resource made its decisions. */
  decisions: ResourceDecision[];
  warnings: string[];
}

const CHUNK_BYTES = 8 << 20;
const NEWLINE = 10;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isNat = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isFence = (v: unknown): boolean => v === null || Number.isSafeInteger(v);

/**
 * Reads `path` from byte `from` in chunks. `take(buf, end, base)` is handed the
 * bytes buf[0..end), which start at file offset `base` with whatever the last call
 * left unconsumed; it consumes whole lines and returns where the rest starts, or
 * STOP. The rest is carried to the front of the buffer (never the whole chunk),
 * and the buffer doubles when one line outgrows it. Returns what was left
 * unconsumed at the end of the file (a last line without its newline).
 */
async function eachChunk(
  path: string,
  name: string,
  from: number,
  chunkBytes: number,
  take: (buf: Buffer, end: number, base: number) => number,
): Promise<{ buf: Buffer; have: number; base: number; stopped: boolean }> {
  let fh: FileHandle;
  try {
    fh = await open(path, "r");
  } catch (err) {
    throw unreadable(name, path, err);
  }
  try {
    let buf = Buffer.allocUnsafe(chunkBytes);
    let have = 0;
    let base = from;
    for (;;) {
      if (have === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, have);
        buf = bigger;
      }
      let bytes: number;
      try {
        bytes = (await fh.read(buf, have, buf.length - have, base + have)).bytesRead;
      } catch (err) {
        throw unreadable(name, path, err);
      }
      if (bytes === 0) return { buf, have, base, stopped: false };
      const end = have + bytes;
      const rest = take(buf, end, base);
      if (rest === STOP) return { buf, have: 0, base, stopped: true };
      have = end - rest;
      if (rest > 0) buf.copy(buf, 0, rest, end);
      base += rest;
    }
  } finally {
    await fh.close();
  }
}

const STOP = -1;

/** A line every so often: where it starts in the file, its time, and its index (history) or seq (resource log). */
export interface Checkpoint { offset: number; time: number; n: number }

/**
 * Calls `line` for each newline-terminated line. A last line without its newline
 * is returned instead: only the caller knows whether it is whole or cut short.
 */
async function eachLine(path: string, name: string, line: (text: string, lineNo: number) => void): Promise<{ text: string; lineNo: number } | null> {
  let lineNo = 0;
  const left = await eachChunk(path, name, 0, CHUNK_BYTES, (buf, end) => {
    const last = buf.lastIndexOf(NEWLINE, end - 1);
    if (last < 0) return 0;
    // A newline byte never occurs inside a UTF-8 sequence, so cutting the bytes
    // at the last newline never splits a character; one decode serves many lines.
    const text = buf.toString("utf8", 0, last);
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      line(nl < 0 ? text.slice(start) : text.slice(start, nl), ++lineNo);
      if (nl < 0) break;
      start = nl + 1;
    }
    return last + 1;
  });
  return left.have > 0 ? { text: left.buf.toString("utf8", 0, left.have), lineNo: lineNo + 1 } : null;
}

/**
 * eachLine for a reader of bytes: `line` gets buf[start, end) (without its newline,
 * valid only during the call), its number and its offset in the file.
 */
async function eachByteLine(path: string, name: string, line: (buf: Buffer, start: number, end: number, lineNo: number, offset: number) => void):
  Promise<{ text: string; lineNo: number } | null> {
  let lineNo = 0;
  const left = await eachChunk(path, name, 0, CHUNK_BYTES, (buf, end, base) => {
    const filled = buf.subarray(0, end);
    let start = 0;
    for (let nl = filled.indexOf(NEWLINE, 0); nl >= 0; nl = filled.indexOf(NEWLINE, start)) {
      line(buf, start, nl, ++lineNo, base + start);
      start = nl + 1;
    }
    return start;
  });
  return left.have > 0 ? { text: left.buf.toString("utf8", 0, left.have), lineNo: lineNo + 1 } : null;
}

function unreadable(name: string, path: string, err: unknown): Error {
  const code = (err as { code?: unknown }).code;
  if (code === "ENOENT") return new BadInput(`${name}: no such file (${path})`);
  if (code === "EISDIR") return new BadInput(`${name}: is a directory, not a file (${path})`);
  if (code === "EACCES" || code === "EPERM") return new BadInput(`${name}: permission denied (${path})`);
  return err instanceof Error ? err : new Error(String(err));
}

// Editors on some systems start a file with a byte-order mark; it is not content.
const BOM = 0xfeff;

function parse(text: string, name: string, lineNo: number): unknown {
  if (lineNo === 1 && text.charCodeAt(0) === BOM) text = text.slice(1);
  try {
    return JSON.parse(text);
  } catch (err) {
    if (text.trim() === "") throw new BadInput(`${name} line ${lineNo}: empty line`);
    throw new BadInput(`${name} line ${lineNo}: not valid JSON (${(err as Error).message})`);
  }
}

/** A cut-short last line is skipped; a whole one (just missing its newline) is kept. */
function parseTail(tail: { text: string; lineNo: number }, name: string, warnings: string[]): unknown {
  try {
    return JSON.parse(tail.lineNo === 1 && tail.text.charCodeAt(0) === BOM ? tail.text.slice(1) : tail.text);
  } catch {
    warnings.push(`${name} line ${tail.lineNo}: last line cut short (no newline, not valid JSON); skipped`);
    return undefined;
  }
}

function headerProblem(h: unknown): string | null {
  if (!isObj(h) || h.kind !== "header") return `the first line must be the header {"format":1,"kind":"header",...}`;
  if (!READABLE_FORMATS.includes(h.format as number))
    return `"format" ${JSON.stringify(h.format)} is not supported (this reader knows formats ${READABLE_FORMATS.join(" and ")})`;
  for (const f of ["run", "workload", "backend"]) if (typeof h[f] !== "string") return `header "${f}" must be a string`;
  if (typeof h.fencing !== "boolean") return `header "fencing" must be true or false`;
  if (h.format === FORMAT_2) {
    if (h.client !== undefined && typeof h.client !== "string") return `header "client" must be a string`;
    if (h.lock !== undefined && !(LOCK_KINDS as readonly unknown[]).includes(h.lock))
      return `header "lock" ${JSON.stringify(h.lock)} is not a lock kind (${LOCK_KINDS.join(", ")})`;
    if (h.lock === "semaphore" && !(Number.isSafeInteger(h.permits) && (h.permits as number) >= 1))
      return `header "permits" must be an integer >= 1 for a semaphore (${h.permits === undefined ? "it is missing" : `got ${JSON.stringify(h.permits)}`})`;
    if (h.lock !== "semaphore" && h.permits !== undefined) return `header "permits" belongs to "lock":"semaphore" only`;
    if (h.fence_on_reentry !== undefined && h.fence_on_reentry !== "same" && h.fence_on_reentry !== "new")
      return `header "fence_on_reentry" must be "same" or "new" (got ${JSON.stringify(h.fence_on_reentry)})`;
  } else if (h.lock !== undefined || h.permits !== undefined) return `header "lock" and "permits" need format 2 (the header says format ${h.format})`;
  return null;
}

/** The header line, parsed, or BadInput naming what is wrong with it. */
export function headerOf(o: unknown, name: string): HistoryHeader {
  const problem = headerProblem(o);
  if (problem) throw new BadInput(`${name} line 1: ${problem}`);
  return o as HistoryHeader;
}

/**
 * Reads an event line (any line but the header) into `e`, or throws BadInput
 * naming the line. Most lines are read from their bytes (event-line.ts) and give
 * null; nemesis events (handed over whole) and lines of another layout go through
 * JSON.parse, and give the parsed object.
 */
export function eventDecoder(name: string, data: boolean): EventDecoder {
  const fast = new EventLineReader(data);
  let keyName = -1;
  const decode = (buf: Buffer, start: number, end: number, lineNo: number, e: EventFields): unknown => {
    if (fast.readEvent(buf, start, end, e)) {
      keyName = fast.keyName;
      return null;
    }
    keyName = -1;
    const rec = fast.read(buf, start, end);
    const o = rec !== null && typeof rec.process === "number" ? rec : parse(buf.toString("utf8", start, end), name, lineNo);
    const problem = readFields(o, e);
    if (problem) throw new BadInput(`${name} line ${lineNo}: ${problem}`);
    return o;
  };
  return Object.assign(decode, { keyName: () => keyName });
}

/** eventDecoder's reader of a line, and the number its table of names gives the key of the line it read last (EventLineReader.keyName). */
export interface EventDecoder {
  (buf: Buffer, start: number, end: number, lineNo: number, e: EventFields): unknown;
  keyName(): number;
}

/** Receives the events of a history in (time, index) order; the record is reused for the next event. */
export type EventSink = (e: EventFields) => void;

/** What a reader may keep of a file besides handing over its content; each costs the pass next to nothing. */
export interface StreamOptions {
  /**
   * A checkpoint every this many lines (from the first event or decision on), for
   * a later reader of stretches (report.html of a large run): `checkpoints` of the
   * result, or null when the history had to be reordered and cannot be read so.
   */
  checkpointEvery?: number;
  /** Handed every nemesis event whole, as parsed, in (time, index) order. */
  nemesis?: (event: HistoryEvent) => void;
  /** False: the sink does not read `data` (a write's), which may then be null; default true. */
  data?: boolean;
}

/**
 * Reads history.ndjson and hands each event to the sink `sinkFor` returns for the
 * header, in (time, index) order, keeping none of them: a finished run's file is
 * already in that order with indexes 0, 1, 2, ..., so one pass checks and delivers
 * it. A file that is not (a killed run's) is read whole and sorted instead, and
 * `sinkFor` is called again for a fresh sink: the first one may have seen a part.
 * Errors are those of `readHistory`, on the same lines.
 */
export async function streamHistory(path: string, sinkFor: (header: HistoryHeader) => EventSink, options: StreamOptions = {}):
  Promise<{ header: HistoryHeader; warnings: string[]; checkpoints?: Checkpoint[] | null }> {
  const name = basename(path);
  const warnings: string[] = [];
  let header: HistoryHeader | null = null;
  let sink: EventSink | null = null;
  const order = new InOrder();
  let ordered = true;
  const structure = new StructureCheck();
  const e = emptyFields();
  // Only known once the whole file is read: a later line out of time order may
  // put an invoke before the completion that seemed to have none.
  let structureError: string | null = null;
  const take = (o: unknown, lineNo: number): void => {
    if (lineNo === 1) {
      header = headerOf(o, name);
      sink = sinkFor(header);
      return;
    }
    const problem = readFields(o, e) ?? noticeProblem(e, header);
    if (problem) throw new BadInput(`${name} line ${lineNo}: ${problem}`);
    deliver(o, lineNo);
  };
  /** The event in `e` (parsed as `o` if it was, for the nemesis) goes on, in order, or the file is found out of order. */
  const deliver = (o: unknown, lineNo: number): void => {
    if (!ordered) return;
    if (!order.take(e)) {
      ordered = false;
      return;
    }
    if (structureError !== null) return;
    const wrong = structure.step(e, lineNo);
    if (wrong !== null) structureError = `${name} line ${lineNo}: ${wrong}`;
    else {
      sink!(e);
      if (e.nemesis && nemesis) nemesis(o as HistoryEvent);
    }
  };
  const { nemesis, checkpointEvery } = options;
  const checkpoints: Checkpoint[] = [];
  let nextMark = checkpointEvery === undefined ? Infinity : 2;
  const decode = eventDecoder(name, options.data ?? true);
  const tail = await eachByteLine(path, name, (buf, start, end, lineNo, offset) => {
    if (lineNo > 1) {
      const o = decode(buf, start, end, lineNo, e);
      if (e.notice) {
        const problem = noticeProblem(e, header);
        if (problem) throw new BadInput(`${name} line ${lineNo}: ${problem}`);
      }
      deliver(o, lineNo);
    }
    else take(parse(buf.toString("utf8", start, end), name, lineNo), lineNo);
    if (lineNo === nextMark) {
      // `e` holds this line's event.
      if (ordered) checkpoints.push({ offset, time: e.time, n: e.index });
      nextMark += checkpointEvery!;
    }
  });
  if (tail) {
    const o = parseTail(tail, name, warnings);
    if (o !== undefined) take(o, tail.lineNo);
  }
  if (!header) throw new BadInput(`${name} line 1: missing header (the file is empty or its only line was cut short)`);
  if (!ordered) {
    const whole = await readHistory(path);
    const fresh = sinkFor(whole.header);
    for (const event of whole.events) {
      fresh(fieldsOf(event, e));
      if (e.nemesis && nemesis) nemesis(event);
    }
    return { header: whole.header, warnings: whole.warnings, checkpoints: checkpointEvery === undefined ? undefined : null };
  }
  if (structureError !== null) throw new BadInput(structureError);
  return { header, warnings, checkpoints: checkpointEvery === undefined ? undefined : checkpoints };
}

export async function readHistory(path: string): Promise<HistoryFile> {
  const name = basename(path);
  const warnings: string[] = [];
  const events: HistoryEvent[] = [];
  let header: HistoryHeader | null = null;
  const scratch = emptyFields();
  const take = (o: unknown, lineNo: number): void => {
    if (lineNo === 1) {
      header = headerOf(o, name);
      return;
    }
    const problem = readFields(o, scratch) ?? noticeProblem(scratch, header);
    if (problem) throw new BadInput(`${name} line ${lineNo}: ${problem}`);
    events.push(o as HistoryEvent);
  };
  const tail = await eachLine(path, name, (text, lineNo) => take(parse(text, name, lineNo), lineNo));
  if (tail) {
    const o = parseTail(tail, name, warnings);
    if (o !== undefined) take(o, tail.lineNo);
  }
  if (!header) throw new BadInput(`${name} line 1: missing header (the file is empty or its only line was cut short)`);
  checkIndexes(events, name);
  // Event i of the file sits on line i + 2 (after the header); `order` keeps that
  // mapping when the file has to be reordered.
  const order = sortOrder(events);
  const sorted = order ? Array.from(order, (i) => events[i]) : events;
  const structure = new StructureCheck();
  for (let i = 0; i < sorted.length; i++) {
    const line = (order ? order[i] : i) + 2;
    const wrong = structure.step(fieldsOf(sorted[i], scratch), line);
    if (wrong !== null) throw new BadInput(`${name} line ${line}: ${wrong}`);
  }
  const notices = sorted.filter((e) => e.type === "notice");
  return { header, events: notices.length ? sorted.filter((e) => e.type !== "notice") : sorted, notices, warnings };
}

/** A notice in a history whose header says format 1, which has none. */
export function noticeProblem(e: EventFields, header: HistoryHeader | null): string | null {
  return e.notice && header?.format !== FORMAT_2 ? `a notice line needs a format 2 history (the header says format ${header?.format})` : null;
}

function checkIndexes(events: HistoryEvent[], name: string): void {
  let dense = true;
  for (let i = 0; i < events.length && dense; i++) dense = events[i].index === i;
  if (dense) return;
  const idx = Float64Array.from(events, (e) => e.index).sort();
  for (let i = 1; i < idx.length; i++) {
    if (idx[i] !== idx[i - 1]) continue;
    const lines = events.flatMap((e, pos) => (e.index === idx[i] ? [pos + 2] : []));
    throw new BadInput(`${name} line ${lines[1]}: "index" ${idx[i]} was already used on line ${lines[0]}`);
  }
}

/** null when the file is already in (time, index) order, as it is unless a run was killed. */
function sortOrder(events: HistoryEvent[]): Uint32Array | null {
  const before = (a: HistoryEvent, b: HistoryEvent): boolean => a.time < b.time || (a.time === b.time && a.index < b.index);
  let sorted = true;
  for (let i = 1; i < events.length && sorted; i++) sorted = before(events[i - 1], events[i]);
  if (sorted) return null;
  const order = Uint32Array.from(events, (_, i) => i);
  return order.sort((a, b) => events[a].time - events[b].time || events[a].index - events[b].index);
}

/** What is wrong with a parsed resource.ndjson line, or null. */
export function decisionProblem(o: unknown): string | null {
  if (!isObj(o)) return "not a JSON object";
  if (!isNat(o.seq) || o.seq < 1) return `"seq" must be an integer >= 1`;
  if (!isNat(o.time)) return `"time" must be an integer >= 0`;
  if (o.op !== "write" && o.op !== "read") return `"op" must be write or read`;
  if (typeof o.key !== "string") return `"key" must be a string`;
  if (!Number.isSafeInteger(o.process)) return `"process" must be an integer`;
  if (typeof o.owner !== "string") return `"owner" must be a string`;
  if (o.fence === undefined || !isFence(o.fence)) return `"fence" must be an integer or null`;
  if (o.max_before === undefined || !isFence(o.max_before)) return `"max_before" must be an integer or null`;
  if (typeof o.accepted !== "boolean" && o.accepted !== null) return `"accepted" must be true, false or null`;
  if (typeof o.fencing !== "boolean") return `"fencing" must be true or false`;
  if (o.order !== undefined && o.order !== null && !(isNat(o.order) && o.order >= 1)) return `"order" must be an integer >= 1 or null`;
  if (o.order === null && o.accepted !== null) return `"order" may be null only where "accepted" is null (a decision that took effect, or was refused, has its place)`;
  return null;
}

/**
 * Hands each decision to `sink` in file order, keeping none; null when the run has
 * no resource log. `checkpointEvery`: as for streamHistory, from the first line on.
 */
export async function streamResourceLog(path: string, sink: (d: ResourceDecision) => void, options: Pick<StreamOptions, "checkpointEvery"> = {}):
  Promise<{ warnings: string[]; checkpoints?: Checkpoint[] } | null> {
  const name = basename(path);
  const warnings: string[] = [];
  let last: ResourceDecision | null = null;
  const take = (o: unknown, lineNo: number): void => {
    const problem = decisionProblem(o);
    if (problem) throw new BadInput(`${name} line ${lineNo}: ${problem}`);
    sink((last = o as ResourceDecision));
  };
  try {
    await stat(path);
  } catch (err) {
    if ((err as { code?: unknown }).code === "ENOENT") return null;
    throw unreadable(name, path, err);
  }
  const checkpoints: Checkpoint[] = [];
  const every = options.checkpointEvery;
  let nextMark = every === undefined ? Infinity : 1;
  const fast = new DecisionLineReader();
  // The resource's own layout is read from the bytes (event-line.ts), any other through JSON.parse.
  const tail = await eachByteLine(path, name, (buf, start, end, lineNo, offset) => {
    const d = fast.read(buf, start, end);
    if (d !== null) sink((last = d));
    else take(parse(buf.toString("utf8", start, end), name, lineNo), lineNo);
    if (lineNo === nextMark) {
      checkpoints.push({ offset, time: last!.time, n: last!.seq });
      nextMark += every!;
    }
  });
  if (tail) {
    const o = parseTail(tail, name, warnings);
    if (o !== undefined) take(o, tail.lineNo);
  }
  return every === undefined ? { warnings } : { warnings, checkpoints };
}

/** null when the run has no resource log (no resource ran). */
export async function readResourceLog(path: string): Promise<ResourceLog | null> {
  const decisions: ResourceDecision[] = [];
  const read = await streamResourceLog(path, (d) => decisions.push(d));
  return read && { decisions, warnings: read.warnings };
}

/**
 * One line as bytes, `buf[start, end)` without its newline; `offset` is where it
 * starts in the file. The bytes are valid only during the call. Return false to stop.
 */
export type RawLineSink = (buf: Buffer, start: number, end: number, offset: number) => boolean | void;

/**
 * Hands each line of `path`, from byte `from` (a line start) on, to `line` as raw
 * bytes, neither decoded nor parsed: for a reader that needs a few fields of every
 * line of a large file and parses only the lines it keeps (report.html of a large
 * run). A last line without its newline is handed over too. Nothing is checked
 * here; the file is expected to have been read by `streamHistory` or
 * `streamResourceLog` first. Returns the offset after the last line handed over.
 * A reader of a short stretch passes a smaller `chunkBytes` (a line longer than it
 * still comes whole).
 */
export async function scanLines(path: string, line: RawLineSink, from = 0, chunkBytes = CHUNK_BYTES): Promise<number> {
  let stoppedAt = 0;
  const left = await eachChunk(path, basename(path), from, chunkBytes, (buf, end, base) => {
    const filled = buf.subarray(0, end);
    let start = 0;
    for (let nl = filled.indexOf(NEWLINE, 0); nl >= 0; nl = filled.indexOf(NEWLINE, start)) {
      if (line(buf, start, nl, base + start) === false) {
        stoppedAt = base + nl + 1;
        return STOP;
      }
      start = nl + 1;
    }
    return start;
  });
  if (left.stopped) return stoppedAt;
  if (left.have > 0) line(left.buf, 0, left.have, left.base);
  return left.base + left.have;
}
