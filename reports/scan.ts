// A few top-level fields of a history or resource-log line, for the report's
// passes over a large run (its out-of-order fallback, and the byte windows it draws
// in full). A line in the plain layout the runner and the resource write is read by
// the checker's own byte readers (store/event-line.ts); any other goes through
// JSON.parse. The checker's pass has already checked every line, so nothing is
// checked here.
import { DecisionLineReader, EventLineReader } from "../store/event-line.ts";
import { emptyFields, FAIL_TYPE, INFO_TYPE, INVOKE_TYPE, OK_TYPE, typeCode, type EventFields } from "../store/event-fields.ts";
import type { ResourceDecision } from "../store/events.ts";

export { FAIL_TYPE, INFO_TYPE, INVOKE_TYPE, OK_TYPE };

/** What the overview reads of an event: the head of the checker's EventFields. */
export type EventHead = Pick<EventFields, "index" | "time" | "process" | "nemesis" | "type" | "f" | "error">;

export const emptyHead = (): EventHead => ({ index: 0, time: 0, process: 0, nemesis: false, type: 0, f: "", error: undefined });

/** The whole line, parsed: for the lines the report keeps, and the unusual ones. */
export const parseLine = <T>(b: Buffer, s: number, e: number): T => JSON.parse(b.toString("utf8", s, e)) as T;

// No write's data is wanted here: its string is not made.
const events = new EventLineReader(false);
const decisions = new DecisionLineReader();
const fields = emptyFields();

interface Head {
  index?: unknown;
  time?: unknown;
  process?: unknown;
  type?: unknown;
  f?: unknown;
  error?: unknown;
}

/** Fills `out` from the event line `b[s, e)`. */
export function readEventHead(b: Buffer, s: number, e: number, out: EventHead): void {
  // A client event of the runner's layout, the most of any run, straight into fields.
  if (events.readEvent(b, s, e, fields)) {
    headOfFields(out);
    return;
  }
  const o: Head = events.read(b, s, e) ?? parseLine<Head>(b, s, e);
  out.index = Number(o.index);
  out.time = Number(o.time);
  out.nemesis = o.process === "nemesis";
  out.process = out.nemesis ? NaN : Number(o.process);
  out.type = typeCode(o.type);
  out.f = String(o.f);
  out.error = typeof o.error === "string" ? o.error : undefined;
}

/**
 * readEventHead but `error` (left undefined), for a reader that wants only when an
 * event happened and whose it is: a line of the runner's layout is read only up to
 * its `f`.
 */
export function readEventStart(b: Buffer, s: number, e: number, out: EventHead): void {
  // readStart leaves `error` undefined.
  if (events.readStart(b, s, e, fields)) headOfFields(out);
  else {
    readEventHead(b, s, e, out);
    out.error = undefined;
  }
}

/** The head of the client event the byte reader just read into `fields`. */
function headOfFields(out: EventHead): void {
  out.index = fields.index;
  out.time = fields.time;
  out.nemesis = false;
  out.process = fields.process;
  out.type = fields.type;
  out.f = fields.f;
  out.error = fields.error;
}

/** `seq` and `time` of a resource-log line, in `out[0]` and `out[1]`. */
export function readDecisionHead(b: Buffer, s: number, e: number, out: [number, number]): void {
  const d = decisions.read(b, s, e) ?? parseLine<ResourceDecision>(b, s, e);
  out[0] = Number(d.seq);
  out[1] = Number(d.time);
}
