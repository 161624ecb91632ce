// A history's events in columns, for handing them from the thread that reads the
// file to the one that checks it (reader-worker.ts): numbers go in a slot of a
// ring of shared memory, so nothing is copied or allocated per batch (a ten-million-
// event run makes hundreds of batches, and buffers handed over and dropped pile up
// until a collection), and the strings (names, keys, errors, owners) once per batch
// in a table the columns point into. An
// owner is named by a few lines of its hold, and keys and names recur, so the
// table holds far fewer strings than the batch has events.
import { clientOp, CLIENT_OPS, INFO_TYPE, NOTICE_TYPE, type EventFields } from "./event-fields.ts";
import type { HistoryEvent, ResourceDecision } from "./events.ts";

/** Events per batch: a few MB, so a batch is handed over while the next is read. */
export const BATCH_EVENTS = 1 << 15;

// Per event: index, time, process, type and flags, f, key, error, owner, fence, ttl, queued, validity, behind.
const STRIDE = 13;
// The type's two bits hold ok, fail, info or invoke; a notice is info with its own flag.
const NEMESIS = 4, NOT_RELEASED = 8, NOTICE = 16;
// Then a lock kind's mode (two bits) and depth (the rest; 0: none).
const MODE_SHIFT = 5, DEPTH_SHIFT = 7, MAX_DEPTH = (1 << 23) - 1;

/** Shared memory for the batches of one reader: `slots` batches of numbers, `stride` numbers per row. */
export function ring(slots: number, stride: number): SharedArrayBuffer {
  return new SharedArrayBuffer(slots * BATCH_EVENTS * stride * 8);
}

/** The slots of a ring, as views. */
export function slotsOf(ring: SharedArrayBuffer, stride: number): Float64Array[] {
  const size = BATCH_EVENTS * stride;
  return Array.from({ length: ring.byteLength / 8 / size }, (_, k) => new Float64Array(ring, k * size * 8, size));
}

export const EVENT_STRIDE = STRIDE;

export interface EventBatch {
  n: number;
  /** Its numbers' slot in the ring. */
  slot: number;
  strings: string[];
  /** Each event's `data`, when the reader was asked for it. */
  data: unknown[] | null;
  /** The nemesis events whole, by their place in the batch. */
  nemesis: { at: number; event: HistoryEvent }[];
}


/**
 * Per small number (a key's number in the line reader's table of names, a process),
 * the place in the batch's table of strings it was given in the batch under way:
 * a typed-array lookup where a map of strings would hash one for every line.
 */
class BatchPlaces {
  private batch = new Int32Array(0);
  private place = new Int32Array(0);

  /** The place `n` was given in batch `batchNo`, -1 when none (`n` >= 0). */
  get(n: number, batchNo: number): number {
    return n < this.batch.length && this.batch[n] === batchNo ? this.place[n] : -1;
  }

  set(n: number, batchNo: number, place: number): void {
    if (n >= this.batch.length) {
      const size = Math.max(n + 1, this.batch.length * 2, 64);
      const batch = new Int32Array(size).fill(-1), places = new Int32Array(size);
      batch.set(this.batch);
      places.set(this.place);
      this.batch = batch;
      this.place = places;
    }
    this.batch[n] = batchNo;
    this.place[n] = place;
  }
}

/** What both writers share: each batch's numbers in the next slot of the ring, its strings in a table of its own. */
class Columns {
  private slot = 0;
  protected nums: Float64Array;
  private strings: string[] = [];
  private ids = new Map<string, number>();
  /** The batch under way, and the place each key name (keyId) and each process's last owner (ownerId) got in it. */
  private batchNo = 0;
  private readonly keyPlaces = new BatchPlaces();
  private readonly ownerPlaces = new BatchPlaces();
  private ownerOf: (string | undefined)[] = [];
  n = 0;
  readonly capacity = BATCH_EVENTS;

  /** `slots`: the ring's, used in turn; the reader must not be more than slots - 1 batches behind. */
  constructor(private readonly slots: Float64Array[]) {
    this.nums = slots[0];
  }

  /** A string that recurs (a key, an error code): once in the table. */
  protected id(s: string | undefined): number {
    if (s === undefined) return -1;
    let id = this.ids.get(s);
    if (id === undefined) this.ids.set(s, (id = this.strings.push(s) - 1));
    return id;
  }

  /**
   * A key the line reader numbered `name` (EventLineReader.keyName; -1: none): the
   * place in the table its first line in this batch gave it, found by that number
   * instead of by hashing the string for every line.
   */
  protected keyId(s: string | undefined, name: number): number {
    if (name < 0 || s === undefined) return this.id(s);
    const placed = this.keyPlaces.get(name, this.batchNo);
    if (placed >= 0) return placed;
    const id = this.id(s);
    this.keyPlaces.set(name, this.batchNo, id);
    return id;
  }

  /**
   * An owner: named by a few lines of its hold, from its process, and nearly never
   * again after; one lookup per process instead of a map that would take in a new
   * string for nearly every hold. The table may hold an owner twice, which the
   * reading side cannot tell.
   */
  protected ownerId(s: string | undefined, process: number): number {
    if (s === undefined) return -1;
    if (!(process >= 0 && process < 1 << 16 && Number.isInteger(process))) return this.id(s);
    const placed = this.ownerPlaces.get(process, this.batchNo);
    if (placed >= 0 && this.ownerOf[process] === s) return placed;
    const id = this.strings.push(s) - 1;
    this.ownerPlaces.set(process, this.batchNo, id);
    this.ownerOf[process] = s;
    return id;
  }

  /** An operation's name: a client operation by its code, -2 - its place in CLIENT_OPS, anything else in the table. */
  protected fId(f: string): number {
    const op = clientOp(f);
    return op >= 0 ? -2 - op : this.id(f);
  }

  /** The batch so far; the next one starts empty in the next slot. */
  protected next(): { n: number; slot: number; strings: string[] } {
    const batch = { n: this.n, slot: this.slot, strings: this.strings };
    this.slot = (this.slot + 1) % this.slots.length;
    this.nums = this.slots[this.slot];
    this.strings = [];
    this.ids = new Map();
    this.batchNo++;
    this.n = 0;
    return batch;
  }
}

export class BatchWriter extends Columns {
  private data: unknown[] | null;
  private nemesis: { at: number; event: HistoryEvent }[] = [];

  constructor(private readonly withData: boolean, slots: Float64Array[]) {
    super(slots);
    this.data = withData ? [] : null;
  }

  /** `keyName`: the line reader's number for the key (EventLineReader.keyName), -1 when it has none. */
  add(e: EventFields, keyName = -1): void {
    const x = this.nums, at = this.n++ * STRIDE;
    x[at] = e.index;
    x[at + 1] = e.time;
    x[at + 2] = e.process;
    const depth = Number.isNaN(e.depth) ? 0 : Math.min(e.depth, MAX_DEPTH);
    x[at + 3] = (e.notice ? INFO_TYPE | NOTICE : e.type) | (e.nemesis ? NEMESIS : 0) | (e.notReleased ? NOT_RELEASED : 0) | (e.mode << MODE_SHIFT) | (depth << DEPTH_SHIFT);
    x[at + 4] = this.fId(e.f);
    x[at + 5] = this.keyId(e.key, keyName);
    x[at + 6] = this.id(e.error);
    x[at + 7] = this.ownerId(e.owner, e.process);
    x[at + 8] = e.fence;
    x[at + 9] = e.ttl;
    x[at + 10] = e.queued;
    x[at + 11] = e.validity;
    x[at + 12] = this.id(e.behind);
    this.data?.push(e.data);
  }

  /** The last event added is this nemesis event. */
  addNemesis(event: HistoryEvent): void {
    this.nemesis.push({ at: this.n - 1, event });
  }

  take(): EventBatch {
    const batch: EventBatch = { ...this.next(), data: this.data, nemesis: this.nemesis };
    this.data = this.withData ? [] : null;
    this.nemesis = [];
    return batch;
  }
}

/** Hands the events of `batch` to `sink` in order, through `e`, and each nemesis event whole to `nemesis` after its fields. */
export function readBatch(batch: EventBatch, slots: Float64Array[], e: EventFields, sink: (e: EventFields) => void, nemesis?: (event: HistoryEvent) => void): void {
  const x = slots[batch.slot], s = batch.strings;
  const str = (id: number): string | undefined => (id < 0 ? undefined : s[id]);
  let next = 0;
  for (let k = 0; k < batch.n; k++) {
    const at = k * STRIDE;
    const flags = x[at + 3];
    e.index = x[at];
    e.time = x[at + 1];
    e.process = x[at + 2];
    e.notice = (flags & NOTICE) !== 0;
    e.type = e.notice ? NOTICE_TYPE : flags & 3;
    e.nemesis = (flags & NEMESIS) !== 0;
    e.notReleased = (flags & NOT_RELEASED) !== 0;
    const f = x[at + 4];
    e.f = f < 0 ? CLIENT_OPS[-2 - f] : s[f];
    e.key = str(x[at + 5]);
    e.error = str(x[at + 6]);
    e.owner = str(x[at + 7]);
    e.fence = x[at + 8];
    e.ttl = x[at + 9];
    e.queued = x[at + 10];
    e.validity = x[at + 11];
    e.mode = (flags >> MODE_SHIFT) & 3;
    const depth = flags >>> DEPTH_SHIFT;
    e.depth = depth === 0 ? NaN : depth;
    e.behind = str(x[at + 12]);
    e.data = batch.data === null ? undefined : batch.data[k];
    sink(e);
    if (next < batch.nemesis.length && batch.nemesis[next].at === k) nemesis?.(batch.nemesis[next++].event);
  }
}

// Per decision: seq, time, process, fence, max_before, flags (write, accepted, fencing, undecided), key, owner, order (NaN: absent, -1: null).
export const DECISION_STRIDE = 9;
const WRITE = 1, ACCEPTED = 2, FENCING = 4, UNDECIDED = 8;

export interface DecisionBatch {
  n: number;
  slot: number;
  strings: string[];
  data: unknown[];
}

/** resource.ndjson's decisions in columns, as BatchWriter does for events. */
export class DecisionBatchWriter extends Columns {
  private data: unknown[] = [];

  add(d: ResourceDecision): void {
    const x = this.nums, at = this.n++ * DECISION_STRIDE;
    x[at] = d.seq;
    x[at + 1] = d.time;
    x[at + 2] = d.process;
    // null as NaN: a fence is an integer or null.
    x[at + 3] = d.fence ?? NaN;
    x[at + 4] = d.max_before ?? NaN;
    x[at + 5] = (d.op === "write" ? WRITE : 0) | (d.accepted ? ACCEPTED : 0) | (d.fencing ? FENCING : 0) | (d.accepted === null ? UNDECIDED : 0);
    x[at + 6] = this.id(d.key);
    x[at + 7] = this.ownerId(d.owner, d.process);
    x[at + 8] = d.order === undefined ? NaN : d.order === null ? -1 : d.order;
    this.data.push(d.data);
  }

  take(): DecisionBatch {
    const batch: DecisionBatch = { ...this.next(), data: this.data };
    this.data = [];
    return batch;
  }
}

/** Hands the decisions of `batch` to `sink` in order, through one reused record. */
export function readDecisionBatch(batch: DecisionBatch, slots: Float64Array[], d: ResourceDecision, sink: (d: ResourceDecision) => void): void {
  const x = slots[batch.slot], s = batch.strings;
  const orNull = (v: number): number | null => (Number.isNaN(v) ? null : v);
  for (let k = 0; k < batch.n; k++) {
    const at = k * DECISION_STRIDE;
    const flags = x[at + 5];
    d.seq = x[at];
    d.time = x[at + 1];
    d.process = x[at + 2];
    d.fence = orNull(x[at + 3]);
    d.max_before = orNull(x[at + 4]);
    d.op = flags & WRITE ? "write" : "read";
    d.accepted = flags & UNDECIDED ? null : (flags & ACCEPTED) !== 0;
    d.fencing = (flags & FENCING) !== 0;
    d.key = s[x[at + 6]];
    d.owner = s[x[at + 7]];
    d.data = batch.data[k];
    const order = x[at + 8];
    // The one reused record: a field absent from this decision must not keep the last one's.
    d.order = Number.isNaN(order) ? undefined : order < 0 ? null : order;
    sink(d);
  }
}
