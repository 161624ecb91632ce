// The worker thread of reader-worker.ts: reads one history.ndjson (streamHistory)
// or resource.ndjson (streamResourceLog), exactly as the checker's own thread
// would, and posts what it reads in batches (event-batch.ts) as it goes. It waits
// while the checking thread is `maxAhead` batches behind, so a large run's events
// never pile up in memory.
import { parentPort, workerData } from "node:worker_threads";
import { BadInput } from "../lib/index.ts";
import { BatchWriter, DECISION_STRIDE, DecisionBatchWriter, EVENT_STRIDE, slotsOf } from "./event-batch.ts";
import type { ReaderWorkerData, ToMain } from "./reader-worker.ts";
import { streamHistory, streamResourceLog } from "./reader.ts";

const { kind, path, checkpointEvery, nemesis, data, maxAhead, ahead, ring } = workerData as ReaderWorkerData;
const behind = new Int32Array(ahead);
const port = parentPort!;
const post = (m: ToMain): void => port.postMessage(m);

/** Posts a batch once the checking thread is less than `maxAhead` behind. */
function send(m: Extract<ToMain, { kind: "batch" | "decisions" }>): void {
  for (let waiting = Atomics.load(behind, 0); waiting >= maxAhead; waiting = Atomics.load(behind, 0)) Atomics.wait(behind, 0, waiting);
  Atomics.add(behind, 0, 1);
  post(m);
}

async function history(): Promise<Awaited<ReturnType<typeof streamHistory>>> {
  const slots = slotsOf(ring, EVENT_STRIDE);
  const writer = new BatchWriter(data, slots);
  const flush = (): void => {
    if (writer.n > 0) send({ kind: "batch", batch: writer.take() });
  };
  const result = await streamHistory(path, (header) => {
    // A reordered file starts over: what was read so far goes first, then the new start.
    flush();
    post({ kind: "sink", header });
    return (e) => {
      if (writer.n === writer.capacity) flush();
      writer.add(e);
    };
  }, { checkpointEvery, data, nemesis: nemesis ? (event) => writer.addNemesis(event) : undefined });
  flush();
  return result;
}

async function resourceLog(): Promise<Awaited<ReturnType<typeof streamResourceLog>>> {
  const writer = new DecisionBatchWriter(slotsOf(ring, DECISION_STRIDE));
  const flush = (): void => {
    if (writer.n > 0) send({ kind: "decisions", batch: writer.take() });
  };
  const result = await streamResourceLog(path, (d) => {
    if (writer.n === writer.capacity) flush();
    writer.add(d);
  }, { checkpointEvery });
  flush();
  return result;
}

try {
  post({ kind: "done", result: kind === "history" ? await history() : await resourceLog() });
} catch (err) {
  post({ kind: "error", badInput: err instanceof BadInput, message: err instanceof Error ? err.message : String(err) });
}
