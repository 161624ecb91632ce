// streamHistory and streamResourceLog with the reading done in a worker thread:
// the file is read, cut into lines, decoded and checked there (reader-thread.ts
// runs the same streamHistory or streamResourceLog), while this thread takes the
// events or decisions batch by batch (event-batch.ts). The checker reads a large
// history and resource log so, each in a thread of its own, while its own thread
// builds the model. Same contract as the readers in this thread: the same order,
// `sinkFor` called again for a reordered history, the same errors (BadInput naming
// the line), warnings and checkpoints. Worth a thread's start (a few tens of ms)
// for a large file only.
import { open, stat } from "node:fs/promises";
import { basename } from "node:path";
import { BadInput, startWorker } from "../lib/index.ts";
import { chunkCount } from "./chunks.ts";
import { emptyFields, type EventFields } from "./event-fields.ts";
import { DECISION_STRIDE, EVENT_STRIDE, readBatch, readDecisionBatch, ring, slotsOf, type DecisionBatch, type EventBatch } from "./event-batch.ts";
import type { HistoryHeader, ResourceDecision } from "./events.ts";
import { headerOf, type Checkpoint, type EventSink, type StreamOptions, type streamHistory, type streamResourceLog } from "./reader.ts";
import { InOrder, StructureCheck } from "./structure.ts";

type Streamed = Awaited<ReturnType<typeof streamHistory>>;
type StreamedLog = Awaited<ReturnType<typeof streamResourceLog>>;

/** What reader-thread.ts is started with. */
export interface ReaderWorkerData {
  kind: "history" | "resource" | "stripe";
  path: string;
  checkpointEvery?: number;
  nemesis: boolean;
  data: boolean;
  /** Batches it may post ahead of this thread's taking them. */
  maxAhead: number;
  /** One Int32: batches posted and not yet taken. */
  ahead: SharedArrayBuffer;
  /** The batches' numbers: maxAhead + 1 slots (event-batch.ts ring). */
  ring: SharedArrayBuffer;
  /**
   * A stripe's chunks (chunks.ts): `first`, `first + every`, ... of `chunkBytes`
   * from byte `from`, of the file's first `size` bytes (its size when the read
   * began, the same for every stripe though a live run's file grows meanwhile).
   */
  stripes?: { first: number; every: number; from: number; chunkBytes: number; size: number };
}

/** What reader-thread.ts posts. */
export type ToMain =
  | { kind: "sink"; header: HistoryHeader }
  | { kind: "batch"; batch: EventBatch }
  | { kind: "decisions"; batch: DecisionBatch }
  | { kind: "chunk"; chunk: number; last: boolean; batch: EventBatch; checkpoints: Checkpoint[] }
  | { kind: "done"; result: Streamed | StreamedLog | { chunks: number } }
  | { kind: "error"; badInput: boolean; message: string };

/**
 * A reader in a worker: `take` gets each message but the last, and calls `taken`
 * once it has handed a batch on; `result` is what the reader returned. The reader
 * runs at most `maxAhead` batches ahead of `taken`. `stop` ends it, unless it has
 * ended.
 */
function inWorker<T>(data: Omit<ReaderWorkerData, "ahead">, take: (m: ToMain, taken: () => void) => void): { result: Promise<T>; stop: () => void } {
  const ahead = new SharedArrayBuffer(4);
  const behind = new Int32Array(ahead);
  const worker = startWorker("store/reader-thread", { workerData: { ...data, ahead } satisfies ReaderWorkerData });
  const taken = (): void => {
    Atomics.sub(behind, 0, 1);
    Atomics.notify(behind, 0);
  };
  let settled = false;
  const result = new Promise<T>((done, fail) => {
    const settle = (f: () => void): void => {
      if (settled) return;
      settled = true;
      f();
      void worker.terminate();
    };
    worker.on("message", (m: ToMain) => {
      if (settled) return;
      try {
        if (m.kind === "done") return settle(() => done(m.result as T));
        if (m.kind === "error") return settle(() => fail(m.badInput ? new BadInput(m.message) : new Error(m.message)));
        take(m, taken);
      } catch (err) {
        settle(() => fail(err));
      }
    });
    worker.on("error", (err) => settle(() => fail(err)));
    worker.on("exit", (code) => settle(() => fail(new Error(`the ${data.kind} reader's thread exited (${code}) before it finished`))));
  });
  const stop = (): void => {
    if (settled) return;
    settled = true;
    // Woken first: a thread waiting for us to take a batch would wait for ever.
    Atomics.store(behind, 0, -(1 << 30));
    Atomics.notify(behind, 0);
    void worker.terminate();
  };
  return { result, stop };
}

export function streamHistoryInWorker(path: string, sinkFor: (header: HistoryHeader) => EventSink, options: StreamOptions = {}): Promise<Streamed> {
  const e = emptyFields();
  let sink: EventSink | null = null;
  const maxAhead = 4;
  const shared = ring(maxAhead + 1, EVENT_STRIDE);
  const slots = slotsOf(shared, EVENT_STRIDE);
  const data = { kind: "history", path, checkpointEvery: options.checkpointEvery, nemesis: options.nemesis !== undefined, data: options.data ?? true, maxAhead, ring: shared } as const;
  return inWorker<Streamed>(data, (m, taken) => {
    if (m.kind === "sink") sink = sinkFor(m.header);
    else if (m.kind === "batch") {
      readBatch(m.batch, slots, e, sink!, options.nemesis);
      taken();
    }
  }).result;
}

/** Threads that read a history's chunks side by side, and the bytes each chunk has. */
const STRIPES = 2;
const CHUNK_BYTES = 8 << 20;
/** Batches a stripe may run ahead: enough to read a whole chunk of its own while the other's is taken. */
const STRIPE_AHEAD = 6;
/** Thrown when the chunks' events are not a history in order: streamHistory reads it again, and says why. */
const OUT_OF_LINE = new Error("history out of line");

/**
 * streamHistory with the events read by two threads at once, each taking every
 * other chunk of the file (chunks.ts); this thread takes the chunks in order,
 * checks that the events come in order and follow the one-operation-at-a-time
 * rules, and hands them to the sink. The common case only: when anything is
 * amiss (a bad line, events out of order, a last line without its newline, a
 * header that is not one plain line), the file is read again by
 * streamHistoryInWorker, with a fresh sink, which keeps every rule and message
 * of streamHistory. Output is streamHistory's in every case.
 */
export async function streamHistoryInWorkers(path: string, sinkFor: (header: HistoryHeader) => EventSink, options: StreamOptions = {}, chunkBytes = CHUNK_BYTES):
  Promise<Streamed> {
  const serially = (): Promise<Streamed> => streamHistoryInWorker(path, sinkFor, options);
  const head = await firstLine(path);
  let header: HistoryHeader;
  try {
    header = headerOf(JSON.parse(head?.text ?? ""), basename(path));
  } catch {
    return serially();
  }
  const size = (await stat(path)).size;
  const total = chunkCount(size, head!.end, chunkBytes);
  const sink = sinkFor(header);
  const structure = new StructureCheck();
  const order = new InOrder();
  const inOrder = (e: EventFields): void => {
    // In a file in order, event i stands on line i + 2.
    if (!order.take(e) || structure.step(e, e.index + 2) !== null) throw OUT_OF_LINE;
    sink(e);
  };
  const e = emptyFields();
  const checkpoints: Checkpoint[] = [];
  const rings = Array.from({ length: STRIPES }, () => ring(STRIPE_AHEAD + 1, EVENT_STRIDE));
  const slots = rings.map((r) => slotsOf(r, EVENT_STRIDE));
  const queues: { m: Extract<ToMain, { kind: "chunk" }>; taken: () => void }[][] = rings.map(() => []);
  let current = 0;
  let failed = false;
  const pump = (): void => {
    for (let t = current % STRIPES; !failed && queues[t].length > 0; t = current % STRIPES) {
      const { m, taken } = queues[t].shift()!;
      try {
        readBatch(m.batch, slots[t], e, inOrder, options.nemesis);
      } catch (err) {
        failed = true;
        throw err;
      }
      taken();
      for (const c of m.checkpoints) checkpoints.push(c);
      if (m.last) current++;
    }
  };
  const readers = rings.map((shared, t) => inWorker<{ chunks: number }>({
    kind: "stripe", path, checkpointEvery: options.checkpointEvery, nemesis: options.nemesis !== undefined, data: options.data ?? true,
    maxAhead: STRIPE_AHEAD, ring: shared, stripes: { first: t, every: STRIPES, from: head!.end, chunkBytes, size },
  }, (m, taken) => {
    if (m.kind !== "chunk") return;
    queues[t].push({ m, taken });
    pump();
  }));
  try {
    await Promise.all(readers.map((r) => r.result));
  } catch (err) {
    failed = true;
    for (const r of readers) r.stop();
    if (err === OUT_OF_LINE || err instanceof BadInput) return serially();
    throw err;
  }
  if (current !== total) throw new Error(`the history's readers handed over ${current} of its ${total} chunks`);
  return { header, warnings: [], checkpoints: options.checkpointEvery === undefined ? undefined : checkpoints };
}

/** The first line of a file and the offset after its newline; null when it has none in its first 64 KB, or cannot be read. */
async function firstLine(path: string): Promise<{ text: string; end: number } | null> {
  // Unreadable: streamHistory says why.
  const fh = await open(path, "r").catch(() => null);
  if (fh === null) return null;
  try {
    const buf = Buffer.allocUnsafe(64 << 10);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const nl = buf.subarray(0, bytesRead).indexOf(10);
    return nl < 0 ? null : { text: buf.toString("utf8", 0, nl), end: nl + 1 };
  } finally {
    await fh.close();
  }
}

/**
 * streamResourceLog in a worker, started now; `start()` begins handing the
 * decisions to `sink` (those decoded so far first). Until then the thread decodes
 * up to `maxAhead` batches ahead: the checker starts it with the history, whose
 * model the decisions need first. `stop` ends it, unless it has ended.
 */
export function resourceLogInWorker(path: string, options: Pick<StreamOptions, "checkpointEvery"> & { maxAhead: number }):
  { start: (sink: (d: ResourceDecision) => void) => Promise<StreamedLog>; stop: () => void } {
  const waiting: DecisionBatch[] = [];
  let sink: ((d: ResourceDecision) => void) | null = null;
  const d = {} as ResourceDecision;
  const shared = ring(options.maxAhead + 1, DECISION_STRIDE);
  const slots = slotsOf(shared, DECISION_STRIDE);
  const data = { kind: "resource", path, checkpointEvery: options.checkpointEvery, nemesis: false, data: true, maxAhead: options.maxAhead, ring: shared } as const;
  let release = (): void => {};
  const { result, stop } = inWorker<StreamedLog>(data, (m, taken) => {
    release = taken;
    if (m.kind !== "decisions") return;
    if (sink) {
      readDecisionBatch(m.batch, slots, d, sink);
      taken();
    } else waiting.push(m.batch);
  });
  // Settled later than it may fail: a failure is the caller's once it starts.
  result.catch(() => {});
  return {
    stop,
    start: (s) => {
      sink = s;
      for (const batch of waiting.splice(0)) {
        readDecisionBatch(batch, slots, d, s);
        release();
      }
      return result;
    },
  };
}
