// The plain shapes the reference checker passes between its files: the header,
// an event, an operation (an invoke with its completion), a hold, a resource
// decision, and a witness. Nothing here decides anything.
import type { ClockBounds } from "./clocks.ts";

export type Kind = "mutex" | "reentrant" | "rw" | "semaphore";

/** docs/history-format.md "The header" and "Format 2 / The header". */
export interface Header {
  format: 1 | 2;
  run: string;
  workload: string;
  backend: string;
  fencing: boolean;
  /** "mutex" when the header names none (every format 1 history). */
  lock: Kind;
  /** A semaphore's permits; 1 for every other kind. */
  permits: number;
  fenceOnReentry: "same" | "new" | null;
}

export type Value = Record<string, unknown>;

/** One line of history.ndjson after the header. */
export interface Event {
  index: number;
  time: number;
  process: number | "nemesis";
  type: "invoke" | "ok" | "fail" | "info" | "notice";
  f: string;
  key?: string;
  value: Value;
  error?: string;
  /** 1-based line of the file (the header is line 1). */
  line: number;
}

/** A client operation: an invoke and the completion of the same process and f. */
export interface Op {
  process: number;
  f: string;
  key: string;
  invoke: Event;
  /** null: never completed (counts as info). */
  done: Event | null;
  outcome: "ok" | "fail" | "info";
  /** The invoke's value and the completion's value ({} when absent). */
  iv: Value;
  ov: Value;
  error?: string;
}

/** A stretch in which a hold was certainly valid, [start, end) in ns. */
export interface Span {
  start: number;
  end: number;
  /** The acquire or renew whose ok opened the span. */
  from: Op;
  /** Why the span ends where it does, for explanations. */
  endWhy: string;
}

/** What one acquire that returned ok granted (an outermost acquire under a reentrant lock). */
export interface Hold {
  /** Its place among the run's holds, in the order their acquires were invoked. */
  id: number;
  key: string;
  owner: string;
  fence: number | null;
  acquire: Op;
  process: number;
  /** rw: "read" or "write" (an acquire without mode is exclusive). */
  mode: "read" | "write";
  renews: Op[];
  releases: Op[];
  writes: Op[];
  reads: Op[];
  /** Reentrant lock: the hold's re-entries (acquires at depth >= 2) that returned ok. */
  reentries: Op[];
  /** Certainly valid spans, sorted and disjoint (holds.ts). */
  spans: Span[];
}

/** One line of resource.ndjson. */
export interface Decision {
  seq: number;
  time: number;
  op: "write" | "read";
  key: string;
  process: number;
  owner: string;
  fence: number | null;
  max_before: number | null;
  accepted: boolean | null;
  data: unknown;
  fencing: boolean;
  /** undefined: the line has no "order"; null: "order": null. */
  order: number | null | undefined;
  line: number;
  /** The history's operation that sent it (writes.ts), when one brackets it. */
  sentBy: Op | null;
}

export interface Witness {
  key?: string;
  seqs?: number[];
  events?: number[];
  explanation: string;
}

export type Findings = Record<string, Witness[]>;

/** Everything read from a run directory. */
export interface Run {
  dir: string;
  header: Header;
  events: Event[];
  ops: Op[];
  /** null when the run has no resource.ndjson. */
  decisions: Decision[] | null;
  /** run.json's options, {} without one. */
  options: Value;
  /** run.json's clock_error (clocks.ts): how far each process's clock may be off; null when none may be. */
  clock: ClockBounds | null;
  /** Instants moved within clock bounds (clocks.ts): with a log, the history's proofs of write order are left out. */
  placed?: boolean;
  /** run.json's history_complete: false for a trace's run, whose history may lack operations (writes.ts proves nothing from their absence). */
  complete: boolean;
  /** The codes of protocol-errors.ndjson's lines ([] without the file). */
  protocolErrors: string[];
  warnings: string[];
  unknownReasons: string[];
}
