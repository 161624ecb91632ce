// streamHistory and streamResourceLog with the reading done in a worker thread:
// the file is read, cut into lines, decoded and checked there (reader-thread.ts
// runs the same streamHistory or streamResourceLog), while this thread takes the
// events or decisions batch by batch (event-batch.ts). The checker reads a large
// history and resource log so, each in a thread of its own, while its own thread
// builds the model. Same contract as the readers in this thread: the same order,
// `sinkFor` called again for a reordered history, the same errors (BadInput naming
// the line), warnings and checkpoints. Worth a thread's start (a few tens of ms)
// for a large file only.
import { BadInput, startWorker } from "../lib/index.ts";
import { emptyFields } from "./event-fields.ts";
import { DECISION_STRIDE, EVENT_STRIDE, readBatch, readDecisionBatch, ring, slotsOf, type DecisionBatch, type EventBatch } from "./event-batch.ts";
import type { HistoryHeader, ResourceDecision } from "./events.ts";
import type { EventSink, StreamOptions, streamHistory, streamResourceLog } from "./reader.ts";

type Streamed = Awaited<ReturnType<typeof streamHistory>>;
type StreamedLog = Awaited<ReturnType<typeof streamResourceLog>>;

/** What reader-thread.ts is started with. */
export interface ReaderWorkerData {
  kind: "history" | "resource";
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
}

/** What reader-thread.ts posts. */
export type ToMain =
  | { kind: "sink"; header: HistoryHeader }
  | { kind: "batch"; batch: EventBatch }
  | { kind: "decisions"; batch: DecisionBatch }
  | { kind: "done"; result: Streamed | StreamedLog }
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
