// streamHistory with the reading done in a worker thread: the file is read, cut
// into lines, decoded and checked there (history-thread.ts runs streamHistory
// itself), while this thread takes the events batch by batch as they come, so
// the checker's model grows while the rest of the file is still being read. Same
// contract as streamHistory: events in (time, index) order, `sinkFor` called again
// for a reordered file, the same errors (BadInput naming the line), warnings and
// checkpoints. Worth its start (a few tens of ms) for a large file only.
import { BadInput, startWorker } from "../lib/index.ts";
import { emptyFields } from "./event-fields.ts";
import { readBatch, type EventBatch } from "./event-batch.ts";
import type { HistoryHeader } from "./events.ts";
import type { EventSink, StreamOptions, streamHistory } from "./reader.ts";

type Streamed = Awaited<ReturnType<typeof streamHistory>>;

/** What history-thread.ts is started with. */
export interface HistoryWorkerData {
  path: string;
  checkpointEvery?: number;
  nemesis: boolean;
  data: boolean;
  /** One Int32: batches posted and not yet taken. */
  ahead: SharedArrayBuffer;
}

/** What history-thread.ts posts. */
export type ToMain =
  | { kind: "sink"; header: HistoryHeader }
  | { kind: "batch"; batch: EventBatch }
  | { kind: "done"; result: Streamed }
  | { kind: "error"; badInput: boolean; message: string };

export function streamHistoryInWorker(path: string, sinkFor: (header: HistoryHeader) => EventSink, options: StreamOptions = {}): Promise<Streamed> {
  const ahead = new SharedArrayBuffer(4);
  const behind = new Int32Array(ahead);
  const data: HistoryWorkerData = { path, checkpointEvery: options.checkpointEvery, nemesis: options.nemesis !== undefined, data: options.data ?? true, ahead };
  const worker = startWorker("store/history-thread", { workerData: data });
  const e = emptyFields();
  let sink: EventSink | null = null;
  return new Promise<Streamed>((done, fail) => {
    let settled = false;
    const settle = (f: () => void): void => {
      if (settled) return;
      settled = true;
      f();
      void worker.terminate();
    };
    worker.on("message", (m: ToMain) => {
      if (settled) return;
      try {
        switch (m.kind) {
          case "sink":
            sink = sinkFor(m.header);
            break;
          case "batch":
            readBatch(m.batch, e, sink!, options.nemesis);
            Atomics.sub(behind, 0, 1);
            Atomics.notify(behind, 0);
            break;
          case "done":
            settle(() => done(m.result));
            break;
          default:
            settle(() => fail(m.badInput ? new BadInput(m.message) : new Error(m.message)));
        }
      } catch (err) {
        settle(() => fail(err));
      }
    });
    worker.on("error", (err) => settle(() => fail(err)));
    worker.on("exit", (code) => settle(() => fail(new Error(`the history reader's thread exited (${code}) before it finished`))));
  });
}
