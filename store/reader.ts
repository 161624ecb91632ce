// Reading a run's history.ndjson and resource.ndjson (HISTORY.md, format 1). Every
// line is checked here, once, so the checker can trust what it gets; every error
// names the file and the 1-based line, as the contract asks.
//
// Speed matters (a 2M-line history must check in at most 1.5x a bare parse loop,
// under 1 GB), so lines are cut by hand from large decoded chunks, and the
// checker takes each event as it is parsed (`streamHistory`) instead of keeping
// two million objects alive.
import { open, stat, type FileHandle } from "node:fs/promises";
import { basename } from "node:path";
import { BadInput } from "../lib/index.ts";
import { emptyFields, fieldsOf, INFO_TYPE, INVOKE_TYPE, readFields, typeName, type EventFields } from "./event-fields.ts";
import { FORMAT, type HistoryEvent, type HistoryHeader, type ResourceDecision } from "./events.ts";

export interface HistoryFile {
  header: HistoryHeader;
  /** Ordered by (time, index). */
  events: HistoryEvent[];
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
  if (h.format !== FORMAT) return `"format" ${JSON.stringify(h.format)} is not supported (this reader knows format ${FORMAT})`;
  for (const f of ["run", "workload", "backend"]) if (typeof h[f] !== "string") return `header "${f}" must be a string`;
  if (typeof h.fencing !== "boolean") return `header "fencing" must be true or false`;
  return null;
}

/** Receives the events of a history in (time, index) order; the record is reused for the next event. */
export type EventSink = (e: EventFields) => void;

/**
 * Reads history.ndjson and hands each event to the sink `sinkFor` returns for the
 * header, in (time, index) order, keeping none of them: a finished run's file is
 * already in that order with indexes 0, 1, 2, ..., so one pass checks and delivers
 * it. A file that is not (a killed run's) is read whole and sorted instead, and
 * `sinkFor` is called again for a fresh sink: the first one may have seen a part.
 * Errors are those of `readHistory`, on the same lines.
 */
export async function streamHistory(path: string, sinkFor: (header: HistoryHeader) => EventSink): Promise<{ header: HistoryHeader; warnings: string[] }> {
  const name = basename(path);
  const warnings: string[] = [];
  let header: HistoryHeader | null = null;
  let sink: EventSink | null = null;
  let next = 0;
  let lastTime = -1;
  let ordered = true;
  const structure = new StructureCheck();
  const e = emptyFields();
  // Only known once the whole file is read: a later line out of time order may
  // put an invoke before the completion that seemed to have none.
  let structureError: string | null = null;
  const take = (o: unknown, lineNo: number): void => {
    if (lineNo === 1) {
      const problem = headerProblem(o);
      if (problem) throw new BadInput(`${name} line 1: ${problem}`);
      header = o as HistoryHeader;
      sink = sinkFor(header);
      return;
    }
    const problem = readFields(o, e);
    if (problem) throw new BadInput(`${name} line ${lineNo}: ${problem}`);
    if (!ordered) return;
    if (e.index !== next || e.time < lastTime) {
      ordered = false;
      return;
    }
    next++;
    lastTime = e.time;
    if (structureError !== null) return;
    const wrong = structure.step(e, lineNo);
    if (wrong !== null) structureError = `${name} line ${lineNo}: ${wrong}`;
    else sink!(e);
  };
  const tail = await eachLine(path, name, (text, lineNo) => take(parse(text, name, lineNo), lineNo));
  if (tail) {
    const o = parseTail(tail, name, warnings);
    if (o !== undefined) take(o, tail.lineNo);
  }
  if (!header) throw new BadInput(`${name} line 1: missing header (the file is empty or its only line was cut short)`);
  if (!ordered) {
    const whole = await readHistory(path);
    const fresh = sinkFor(whole.header);
    for (const event of whole.events) fresh(fieldsOf(event, e));
    return { header: whole.header, warnings: whole.warnings };
  }
  if (structureError !== null) throw new BadInput(structureError);
  return { header, warnings };
}

export async function readHistory(path: string): Promise<HistoryFile> {
  const name = basename(path);
  const warnings: string[] = [];
  const events: HistoryEvent[] = [];
  let header: HistoryHeader | null = null;
  const scratch = emptyFields();
  const take = (o: unknown, lineNo: number): void => {
    if (lineNo === 1) {
      const problem = headerProblem(o);
      if (problem) throw new BadInput(`${name} line 1: ${problem}`);
      header = o as HistoryHeader;
      return;
    }
    const problem = readFields(o, scratch);
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
  return { header, events: sorted, warnings };
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

interface ProcessState {
  /** Line of the outstanding invoke and its f, or 0. */
  open: number;
  openF: string;
  /** Lines of the last completed invoke (and its f) and of its completion, or 0. */
  lastInvoke: number;
  lastF: string;
  lastDone: number;
  /** Line of the `info` that retired the process, or 0. */
  retired: number;
}

/** The one-operation-at-a-time rules of HISTORY.md, fed the events in time order. */
class StructureCheck {
  // Process numbers are nearly always small: an array beats a map on every event.
  private readonly small: (ProcessState | undefined)[] = [];
  private readonly others = new Map<number, ProcessState>();

  private state(p: number): ProcessState {
    const small = Number.isInteger(p) && p >= 0 && p < 1 << 16;
    let s = small ? this.small[p] : this.others.get(p);
    if (!s) {
      s = { open: 0, openF: "", lastInvoke: 0, lastF: "", lastDone: 0, retired: 0 };
      if (small) {
        while (this.small.length < p) this.small.push(undefined);
        this.small[p] = s;
      } else this.others.set(p, s);
    }
    return s;
  }

  /** What is wrong with `e` (on file line `line`) after the events before it, or null. */
  step(e: EventFields, line: number): string | null {
    if (e.nemesis) return null;
    const s = this.state(e.process);
    if (e.type === INVOKE_TYPE) {
      if (s.retired) return `process ${e.process} invokes "${e.f}" after its operation got info on line ${s.retired}; a process that got info never issues another`;
      if (s.open) return `process ${e.process} invokes "${e.f}" while its "${s.openF}" invoked on line ${s.open} is still outstanding`;
      s.open = line;
      s.openF = e.f;
      return null;
    }
    if (!s.open) {
      if (s.lastInvoke && s.lastF === e.f) {
        return `second completion (${typeName(e.type)}) of the "${e.f}" process ${e.process} invoked on line ${s.lastInvoke}, already completed on line ${s.lastDone}`;
      }
      return `process ${e.process} completes "${e.f}" with ${typeName(e.type)} but has no open invoke`;
    }
    if (s.openF !== e.f) return `process ${e.process} completes "${e.f}" but its open invoke on line ${s.open} is "${s.openF}"`;
    s.lastInvoke = s.open;
    s.lastF = s.openF;
    s.lastDone = line;
    s.open = 0;
    if (e.type === INFO_TYPE) s.retired = line;
    return null;
  }
}

function decisionProblem(o: unknown): string | null {
  if (!isObj(o)) return "not a JSON object";
  if (!isNat(o.seq) || o.seq < 1) return `"seq" must be an integer >= 1`;
  if (!isNat(o.time)) return `"time" must be an integer >= 0`;
  if (o.op !== "write" && o.op !== "read") return `"op" must be write or read`;
  if (typeof o.key !== "string") return `"key" must be a string`;
  if (!Number.isSafeInteger(o.process)) return `"process" must be an integer`;
  if (typeof o.owner !== "string") return `"owner" must be a string`;
  if (o.fence === undefined || !isFence(o.fence)) return `"fence" must be an integer or null`;
  if (o.max_before === undefined || !isFence(o.max_before)) return `"max_before" must be an integer or null`;
  if (typeof o.accepted !== "boolean") return `"accepted" must be true or false`;
  if (typeof o.fencing !== "boolean") return `"fencing" must be true or false`;
  return null;
}

/** Hands each decision to `sink` in file order, keeping none; null when the run has no resource log. */
export async function streamResourceLog(path: string, sink: (d: ResourceDecision) => void): Promise<{ warnings: string[] } | null> {
  const name = basename(path);
  const warnings: string[] = [];
  const take = (o: unknown, lineNo: number): void => {
    const problem = decisionProblem(o);
    if (problem) throw new BadInput(`${name} line ${lineNo}: ${problem}`);
    sink(o as ResourceDecision);
  };
  try {
    await stat(path);
  } catch (err) {
    if ((err as { code?: unknown }).code === "ENOENT") return null;
    throw unreadable(name, path, err);
  }
  const tail = await eachLine(path, name, (text, lineNo) => take(parse(text, name, lineNo), lineNo));
  if (tail) {
    const o = parseTail(tail, name, warnings);
    if (o !== undefined) take(o, tail.lineNo);
  }
  return { warnings };
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
