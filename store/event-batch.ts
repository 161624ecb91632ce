// A history's events in columns, for handing them from the thread that reads the
// file to the one that checks it (history-worker.ts): numbers go in one
// Float64Array that changes threads without being copied, and the strings (names,
// keys, errors, owners) once per batch in a table the columns point into. An
// owner is named by a few lines of its hold, and keys and names recur, so the
// table holds far fewer strings than the batch has events.
import type { EventFields } from "./event-fields.ts";
import type { HistoryEvent } from "./events.ts";

/** Events per batch: a few MB, so a batch is handed over while the next is read. */
export const BATCH_EVENTS = 1 << 15;

// Per event: index, time, process, type and flags, f, key, error, owner, fence, ttl, queued, validity.
const STRIDE = 12;
const NEMESIS = 4, NOT_RELEASED = 8;

export interface EventBatch {
  n: number;
  nums: Float64Array;
  strings: string[];
  /** Each event's `data`, when the reader was asked for it. */
  data: unknown[] | null;
  /** The nemesis events whole, by their place in the batch. */
  nemesis: { at: number; event: HistoryEvent }[];
}

export class BatchWriter {
  private nums = new Float64Array(BATCH_EVENTS * STRIDE);
  private strings: string[] = [];
  private ids = new Map<string, number>();
  private data: unknown[] | null;
  private nemesis: { at: number; event: HistoryEvent }[] = [];
  n = 0;
  readonly capacity = BATCH_EVENTS;

  constructor(private readonly withData: boolean) {
    this.data = withData ? [] : null;
  }

  private id(s: string | undefined): number {
    if (s === undefined) return -1;
    let id = this.ids.get(s);
    if (id === undefined) this.ids.set(s, (id = this.strings.push(s) - 1));
    return id;
  }

  add(e: EventFields): void {
    const x = this.nums, at = this.n++ * STRIDE;
    x[at] = e.index;
    x[at + 1] = e.time;
    x[at + 2] = e.process;
    x[at + 3] = e.type | (e.nemesis ? NEMESIS : 0) | (e.notReleased ? NOT_RELEASED : 0);
    x[at + 4] = this.id(e.f);
    x[at + 5] = this.id(e.key);
    x[at + 6] = this.id(e.error);
    x[at + 7] = this.id(e.owner);
    x[at + 8] = e.fence;
    x[at + 9] = e.ttl;
    x[at + 10] = e.queued;
    x[at + 11] = e.validity;
    this.data?.push(e.data);
  }

  /** The last event added is this nemesis event. */
  addNemesis(event: HistoryEvent): void {
    this.nemesis.push({ at: this.n - 1, event });
  }

  /** The batch so far; the writer starts a new one. */
  take(): EventBatch {
    const batch: EventBatch = { n: this.n, nums: this.nums, strings: this.strings, data: this.data, nemesis: this.nemesis };
    this.nums = new Float64Array(BATCH_EVENTS * STRIDE);
    this.strings = [];
    this.ids = new Map();
    this.data = this.withData ? [] : null;
    this.nemesis = [];
    this.n = 0;
    return batch;
  }
}

/** Hands the events of `batch` to `sink` in order, through `e`, and each nemesis event whole to `nemesis` after its fields. */
export function readBatch(batch: EventBatch, e: EventFields, sink: (e: EventFields) => void, nemesis?: (event: HistoryEvent) => void): void {
  const x = batch.nums, s = batch.strings;
  const str = (id: number): string | undefined => (id < 0 ? undefined : s[id]);
  let next = 0;
  for (let k = 0; k < batch.n; k++) {
    const at = k * STRIDE;
    const flags = x[at + 3];
    e.index = x[at];
    e.time = x[at + 1];
    e.process = x[at + 2];
    e.type = flags & 3;
    e.nemesis = (flags & NEMESIS) !== 0;
    e.notReleased = (flags & NOT_RELEASED) !== 0;
    e.f = s[x[at + 4]];
    e.key = str(x[at + 5]);
    e.error = str(x[at + 6]);
    e.owner = str(x[at + 7]);
    e.fence = x[at + 8];
    e.ttl = x[at + 9];
    e.queued = x[at + 10];
    e.validity = x[at + 11];
    e.data = batch.data === null ? undefined : batch.data[k];
    sink(e);
    if (next < batch.nemesis.length && batch.nemesis[next].at === k) nemesis?.(batch.nemesis[next++].event);
  }
}
