// Reading a run directory: history.ndjson (header, events), resource.ndjson,
// run.json and protocol-errors.ndjson, each line with JSON.parse, held to the rules of
// docs/history-format.md "history.ndjson", "resource.ndjson", "A killed run's
// files" and "Bad input". Anything the docs call bad input throws BadInput with
// the file and the 1-based line; a last line cut short (no newline, not JSON) is
// skipped with a warning; events are put in (time, index) order before the
// invoke/completion rules are checked and operations are paired.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { BadInput } from "../../lib/index.ts";
import { clockBounds } from "./clocks.ts";
import type { Decision, Event, Header, Kind, Op, Run, Value } from "./types.ts";

const CLIENT_OPS = ["acquire", "renew", "release", "write", "read"];
const KINDS: Kind[] = ["mutex", "reentrant", "rw", "semaphore"];

/** The file's lines as [1-based line number, text], with a cut-short last line dropped (and warned of). */
function lines(path: string, name: string, warnings: string[]): Array<[number, string]> {
  let text = readFileSync(path, "utf8");
  if (text.startsWith("\uFEFF")) text = text.slice(1);
  const parts = text.split("\n");
  const endsWithNewline = parts[parts.length - 1] === "";
  if (endsWithNewline) parts.pop();
  const out: Array<[number, string]> = parts.map((p, i) => [i + 1, p.endsWith("\r") ? p.slice(0, -1) : p]);
  if (!endsWithNewline && out.length > 0) {
    const [n, last] = out[out.length - 1];
    try {
      JSON.parse(last);
    } catch {
      warnings.push(`${name} line ${n}: last line cut short (no newline, not valid JSON); skipped`);
      out.pop();
    }
  }
  return out;
}

function parseLine(name: string, n: number, text: string): Value {
  if (text.trim() === "") throw new BadInput(`${name} line ${n}: empty line`);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new BadInput(`${name} line ${n}: not valid JSON (${(e as Error).message})`);
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new BadInput(`${name} line ${n}: not a JSON object`);
  return v as Value;
}

const isInt = (x: unknown): x is number => typeof x === "number" && Number.isInteger(x);

function readHeader(name: string, n: number, h: Value): Header {
  const bad = (msg: string) => new BadInput(`${name} line ${n}: ${msg}`);
  if (h.kind !== "header" || h.format === undefined) throw bad(`the first line must be the header {"format":1,"kind":"header",...}`);
  if (h.format !== 1 && h.format !== 2) throw bad(`"format" ${JSON.stringify(h.format)} is not supported (this reader knows formats 1 and 2)`);
  for (const f of ["run", "workload", "backend"]) if (typeof h[f] !== "string") throw bad(`header "${f}" must be a string`);
  if (typeof h.fencing !== "boolean") throw bad(`header "fencing" must be true or false`);
  const format = h.format;
  if (format === 1) {
    const f2 = ["lock", "permits", "fence_on_reentry"].filter((f) => h[f] !== undefined);
    if (f2.length) throw bad(`header ${f2.map((f) => `"${f}"`).join(" and ")} need${f2.length === 1 ? "s" : ""} format 2 (the header says format 1)`);
  }
  const lock = (h.lock ?? "mutex") as Kind;
  if (!KINDS.includes(lock)) throw bad(`header "lock" ${JSON.stringify(h.lock)} is not a lock kind (mutex, reentrant, rw, semaphore)`);
  if (h.permits !== undefined && lock !== "semaphore") throw bad(`header "permits" belongs to "lock":"semaphore" only`);
  if (lock === "semaphore" && !(isInt(h.permits) && h.permits >= 1)) throw bad(`header "permits" must be an integer >= 1 with "lock":"semaphore"`);
  const fr = h.fence_on_reentry;
  if (fr !== undefined && fr !== "same" && fr !== "new") throw bad(`header "fence_on_reentry" must be "same" or "new" (got ${JSON.stringify(fr)})`);
  return {
    format,
    run: h.run as string,
    workload: h.workload as string,
    backend: h.backend as string,
    fencing: h.fencing,
    lock,
    permits: lock === "semaphore" ? (h.permits as number) : 1,
    fenceOnReentry: (fr as "same" | "new" | undefined) ?? null,
  };
}

/** One event line, held to the field table of "Events" and "Client operations". */
function readEvent(name: string, n: number, e: Value, header: Header): Event {
  const bad = (msg: string) => new BadInput(`${name} line ${n}: ${msg}`);
  if (!isInt(e.index) || e.index < 0) throw bad(`"index" must be an integer >= 0`);
  if (!isInt(e.time) || e.time < 0) throw bad(`"time" must be an integer >= 0`);
  const nemesis = e.process === "nemesis";
  if (!nemesis && !isInt(e.process)) throw bad(`"process" must be an integer or "nemesis"`);
  const types = header.format === 2 ? ["invoke", "ok", "fail", "info", "notice"] : ["invoke", "ok", "fail", "info"];
  if (e.type === "notice" && header.format === 1) throw bad(`a notice line needs a format 2 history (the header says format 1)`);
  if (typeof e.type !== "string" || !types.includes(e.type)) throw bad(`"type" must be one of ${types.join(", ")}`);
  if (typeof e.f !== "string") throw bad(`"f" must be a string`);
  if (e.key !== undefined && typeof e.key !== "string") throw bad(`"key" must be a string`);
  if (e.value !== undefined && (e.value === null || typeof e.value !== "object" || Array.isArray(e.value))) throw bad(`"value" must be an object`);
  if (e.error !== undefined && typeof e.error !== "string") throw bad(`"error" must be a string`);
  const value = (e.value ?? {}) as Value;
  if (nemesis) {
    if (e.type !== "info") throw bad(`a nemesis event must have "type" info`);
  } else if (e.type !== "notice") {
    if (!CLIENT_OPS.includes(e.f)) throw bad(`"f" ${JSON.stringify(e.f)} is not a client operation (${CLIENT_OPS.join(", ")})`);
    if (e.type === "invoke" && e.key === undefined) throw bad(`a client invoke needs "key" (the lock name)`);
    if ("fence" in value && value.fence !== null && !isInt(value.fence)) throw bad(`"value.fence" must be an integer or null`);
    if ("ttl_ms" in value && !(typeof value.ttl_ms === "number" && value.ttl_ms >= 0)) throw bad(`"value.ttl_ms" must be a number >= 0`);
    const needsOwner =
      (e.f === "acquire" && e.type === "ok") || (e.type === "invoke" && (e.f === "renew" || e.f === "release" || e.f === "write"));
    if (needsOwner && typeof value.owner !== "string") throw bad(`"value.owner" must be a string (the hold's owner) on ${e.f === "acquire" ? "an acquire's ok" : `a ${e.f}'s invoke`}`);
    if (header.format === 2) {
      if ("mode" in value && value.mode !== "read" && value.mode !== "write") throw bad(`"value.mode" must be "read" or "write"`);
      if ("depth" in value && !(isInt(value.depth) && value.depth >= 1)) throw bad(`"value.depth" must be an integer >= 1`);
    }
  }
  return {
    index: e.index,
    time: e.time,
    process: nemesis ? "nemesis" : (e.process as number),
    type: e.type as Event["type"],
    f: e.f,
    key: e.key as string | undefined,
    value,
    error: e.error as string | undefined,
    line: n,
  };
}

/** Pairs each invoke with its completion, in (time, index) order ("Invoke and completion"). */
function pair(name: string, events: Event[]): Op[] {
  const ops: Op[] = [];
  const open = new Map<number, Op>();
  const retired = new Map<number, number>(); // process -> line of the info that retired it
  for (const e of events) {
    if (e.process === "nemesis" || e.type === "notice") continue;
    const p = e.process;
    const bad = (msg: string) => new BadInput(`${name} line ${e.line}: ${msg}`);
    if (e.type === "invoke") {
      if (retired.has(p)) throw bad(`process ${p} invokes "${e.f}" after its operation got info on line ${retired.get(p)}; a process that got info never issues another`);
      const o = open.get(p);
      if (o) throw bad(`process ${p} invokes "${e.f}" while its "${o.f}" invoked on line ${o.invoke.line} is still outstanding`);
      const op: Op = { process: p, f: e.f, key: e.key as string, invoke: e, done: null, outcome: "info", iv: e.value, ov: {} };
      open.set(p, op);
      ops.push(op);
      continue;
    }
    const o = open.get(p);
    if (!o) throw bad(`process ${p} completes "${e.f}" with ${e.type} but has no open invoke`);
    if (o.f !== e.f) throw bad(`process ${p} completes "${e.f}" with ${e.type}, but its open invoke on line ${o.invoke.line} is "${o.f}"`);
    o.done = e;
    o.outcome = e.type as Op["outcome"];
    o.ov = e.value;
    o.error = e.error;
    open.delete(p);
    if (e.type === "info") retired.set(p, e.line);
  }
  return ops;
}

function readHistory(dir: string, warnings: string[]): { header: Header; events: Event[]; ops: Op[] } {
  const path = join(dir, "history.ndjson");
  if (!existsSync(dir)) throw new BadInput(`run directory ${dir} does not exist`);
  if (!statSync(dir).isDirectory()) throw new BadInput(`${dir} is not a run directory (it is a file)`);
  if (!existsSync(path)) throw new BadInput(`${dir} has no history.ndjson: not a run directory, or the run never started`);
  const ls = lines(path, path, warnings);
  if (ls.length === 0) throw new BadInput(`${path} line 1: missing header (the file is empty or its only line was cut short)`);
  const header = readHeader(path, ls[0][0], parseLine(path, ls[0][0], ls[0][1]));
  const events: Event[] = [];
  const lineOfIndex = new Map<number, number>();
  for (const [n, text] of ls.slice(1)) {
    const e = readEvent(path, n, parseLine(path, n, text), header);
    const before = lineOfIndex.get(e.index);
    if (before !== undefined) throw new BadInput(`${path} line ${n}: "index" ${e.index} was already used on line ${before}`);
    lineOfIndex.set(e.index, n);
    events.push(e);
  }
  events.sort((a, b) => a.time - b.time || a.index - b.index);
  return { header, events, ops: pair(path, events) };
}

/** resource.ndjson, "resource.ndjson" and "Committed decisions"; null when the file is absent. */
function readResource(dir: string, header: Header, warnings: string[], unknownReasons: string[]): Decision[] | null {
  const path = join(dir, "resource.ndjson");
  if (!existsSync(path)) return null;
  const out: Decision[] = [];
  for (const [n, text] of lines(path, path, warnings)) {
    const d = parseLine(path, n, text);
    const bad = (msg: string) => new BadInput(`${path} line ${n}: ${msg}`);
    if (!isInt(d.seq) || d.seq < 1) throw bad(`"seq" must be an integer >= 1`);
    if (!isInt(d.time) || d.time < 0) throw bad(`"time" must be an integer >= 0`);
    if (d.op !== "write" && d.op !== "read") throw bad(`"op" must be "write" or "read"`);
    if (typeof d.key !== "string") throw bad(`"key" must be a string`);
    if (!isInt(d.process)) throw bad(`"process" must be an integer`);
    if (typeof d.owner !== "string") throw bad(`"owner" must be a string`);
    for (const f of ["fence", "max_before"]) if (d[f] !== null && !isInt(d[f])) throw bad(`"${f}" must be an integer or null`);
    if (typeof d.fencing !== "boolean") throw bad(`"fencing" must be true or false`);
    if (header.format === 1) {
      if (d.accepted === null) throw bad(`seq ${d.seq} says "accepted": null, which only a format 2 history's resource may (the header says format 1)`);
      if ("order" in d) throw bad(`seq ${d.seq} carries "order", which only a format 2 history's resource may (the header says format 1)`);
    }
    if (d.accepted !== null && typeof d.accepted !== "boolean") throw bad(`"accepted" must be true, false${header.format === 2 ? " or null" : ""}`);
    if ("order" in d && d.order !== null && !isInt(d.order)) throw bad(`"order" must be an integer or null`);
    if (d.order === null && d.accepted !== null) throw bad(`seq ${d.seq}: only a decision of unknown outcome ("accepted": null) may have "order": null`);
    out.push({
      seq: d.seq,
      time: d.time,
      op: d.op,
      key: d.key,
      process: d.process,
      owner: d.owner,
      fence: d.fence as number | null,
      max_before: d.max_before as number | null,
      accepted: d.accepted as boolean | null,
      data: d.data,
      fencing: d.fencing,
      order: "order" in d ? (d.order as number | null) : undefined,
      line: n,
      sentBy: null,
    });
  }
  // "seq ... from 1, with no gaps": a restart numbering from 1 again is only a warning.
  out.forEach((d, i) => {
    if (i === 0) {
      if (d.seq !== 1) unknownReasons.push(`resource.ndjson: the first decision is seq ${d.seq}, not 1; earlier decisions are missing`);
      return;
    }
    const prev = out[i - 1].seq;
    if (d.seq === prev + 1) return;
    if (d.seq === 1) warnings.push(`resource.ndjson line ${d.line}: seq 1 again after seq ${prev}: the resource restarted`);
    else unknownReasons.push(`resource.ndjson: seq ${d.seq} follows seq ${prev}; decisions are missing or out of order`);
  });
  return out;
}

/** run.json's `options` and `clock_error` (docs/history-format.md "run.json"), {} and undefined without them. */
function readRunJson(dir: string, warnings: string[]): { options: Value; clockError: unknown; complete: boolean } {
  const path = join(dir, "run.json");
  if (!existsSync(path)) return { options: {}, clockError: undefined, complete: true };
  try {
    const r = JSON.parse(readFileSync(path, "utf8"));
    if (r && typeof r === "object" && !Array.isArray(r))
      return { options: (r.options && typeof r.options === "object" ? r.options : {}) as Value, clockError: r.clock_error, complete: r.history_complete !== false };
  } catch {
    // falls through to the warning
  }
  warnings.push(`${path} is not a JSON object; ignored`);
  return { options: {}, clockError: undefined, complete: true };
}

/**
 * docs/history-format.md "protocol-errors.ndjson": one line per time an adapter
 * program broke the protocol; every line counts, one cut short by a kill too. The
 * codes, in the file's order ("?" where a line cannot be read); [] without the file.
 */
function readProtocolErrors(dir: string): string[] {
  const path = join(dir, "protocol-errors.ndjson");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => {
    try {
      const code = JSON.parse(l)?.code;
      return typeof code === "string" ? code : "?";
    } catch {
      return "?";
    }
  });
}

export function readRun(dir: string): Run {
  const warnings: string[] = [];
  const unknownReasons: string[] = [];
  const { header, events, ops } = readHistory(dir, warnings);
  const decisions = readResource(dir, header, warnings, unknownReasons);
  const { options, clockError, complete } = readRunJson(dir, warnings);
  return { dir, header, events, ops, decisions, options, clock: clockBounds(clockError), complete, protocolErrors: readProtocolErrors(dir), warnings, unknownReasons };
}
