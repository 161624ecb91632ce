// The worker thread of history-worker.ts: reads one history.ndjson with
// streamHistory, exactly as the checker's own thread would, and posts its events
// in batches (event-batch.ts) as it goes. It waits while the checking thread is
// MAX_AHEAD batches behind, so a large run's events never pile up in memory.
import { parentPort, workerData } from "node:worker_threads";
import { BadInput } from "../lib/index.ts";
import { BatchWriter } from "./event-batch.ts";
import type { HistoryWorkerData, ToMain } from "./history-worker.ts";
import { streamHistory } from "./reader.ts";

const { path, checkpointEvery, nemesis, data, ahead } = workerData as HistoryWorkerData;
const behind = new Int32Array(ahead);
const port = parentPort!;
const post = (m: ToMain, transfer: ArrayBuffer[] = []): void => port.postMessage(m, transfer);

let writer = new BatchWriter(data);
function flush(): void {
  if (writer.n === 0) return;
  const batch = writer.take();
  for (let waiting = Atomics.load(behind, 0); waiting >= MAX_AHEAD; waiting = Atomics.load(behind, 0)) Atomics.wait(behind, 0, waiting);
  Atomics.add(behind, 0, 1);
  post({ kind: "batch", batch }, [batch.nums.buffer as ArrayBuffer]);
}
const MAX_AHEAD = 4;

try {
  const result = await streamHistory(path, (header) => {
    // A reordered file starts over: what was read so far goes first, then the new start.
    flush();
    writer = new BatchWriter(data);
    post({ kind: "sink", header });
    return (e) => {
      if (writer.n === writer.capacity) flush();
      writer.add(e);
    };
  }, { checkpointEvery, data, nemesis: nemesis ? (event) => writer.addNemesis(event) : undefined });
  flush();
  post({ kind: "done", result });
} catch (err) {
  post({ kind: "error", badInput: err instanceof BadInput, message: err instanceof Error ? err.message : String(err) });
}
