// The worker thread of reader-worker.ts: reads one history.ndjson (streamHistory)
// or resource.ndjson (streamResourceLog), exactly as the checker's own thread
// would, or every other chunk of a history's events (stripes), and posts what it
// reads in batches (event-batch.ts) as it goes. It waits while the checking
// thread is `maxAhead` batches behind, so a large run's events never pile up in
// memory.
import { closeSync, openSync } from "node:fs";
import { basename } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import { BadInput } from "../lib/index.ts";
import { chunkCount, chunkLines } from "./chunks.ts";
import { BatchWriter, DECISION_STRIDE, DecisionBatchWriter, EVENT_STRIDE, slotsOf } from "./event-batch.ts";
import { emptyFields } from "./event-fields.ts";
import type { HistoryEvent } from "./events.ts";
import type { ReaderWorkerData, ToMain } from "./reader-worker.ts";
import { eventDecoder, streamHistory, streamResourceLog, type Checkpoint } from "./reader.ts";

const { kind, path, checkpointEvery, nemesis, data, maxAhead, ahead, ring, stripes } = workerData as ReaderWorkerData;
const behind = new Int32Array(ahead);
const port = parentPort!;
const post = (m: ToMain): void => port.postMessage(m);

/** Posts a batch once the checking thread is less than `maxAhead` behind. */
function send(m: Extract<ToMain, { kind: "batch" | "decisions" | "chunk" }>): void {
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

/**
 * The events of chunks `stripes.first`, `first + every`, ... of the history
 * (chunks.ts), each chunk's in batches, its last batch marked: the checking
 * thread takes the chunks in order from the threads in turn. Only what one line
 * tells is checked here (a line that is not a valid event); the order of events
 * and the one-operation-at-a-time rules are the checking thread's. A checkpoint
 * goes with every event whose index is a multiple of `checkpointEvery`: in a file
 * in order, event i is on line i + 2, so those are streamHistory's. A line that
 * is not a valid event, or a last line without its newline, ends the thread with
 * BadInput: streamHistory then reads the file again, and says what is wrong.
 */
function stripe(): { chunks: number } {
  const { first, every, from, chunkBytes, size } = stripes!;
  const writer = new BatchWriter(data, slotsOf(ring, EVENT_STRIDE));
  const decode = eventDecoder(basename(path), data);
  const e = emptyFields();
  const scratch = { buf: Buffer.allocUnsafe(chunkBytes + 1) };
  const fd = openSync(path, "r");
  let checkpoints: Checkpoint[] = [];
  let chunk = first;
  const flush = (last: boolean): void => {
    send({ kind: "chunk", chunk, last, batch: writer.take(), checkpoints });
    checkpoints = [];
  };
  try {
    const chunks = chunkCount(size, from, chunkBytes);
    for (; chunk < chunks; chunk += every) {
      const whole = chunkLines(fd, size, from, chunkBytes, chunk, scratch, (buf, start, end, offset) => {
        const o = decode(buf, start, end, 0, e);
        if (writer.n === writer.capacity) flush(false);
        writer.add(e, decode.keyName());
        if (e.nemesis && nemesis) writer.addNemesis(o as HistoryEvent);
        if (checkpointEvery !== undefined && e.index % checkpointEvery === 0) checkpoints.push({ offset, time: e.time, n: e.index });
      });
      if (!whole) throw new BadInput(`${basename(path)}: its last line has no newline`);
      flush(true);
    }
    return { chunks };
  } finally {
    closeSync(fd);
  }
}

try {
  post({ kind: "done", result: kind === "history" ? await history() : kind === "stripe" ? stripe() : await resourceLog() });
} catch (err) {
  post({ kind: "error", badInput: err instanceof BadInput, message: err instanceof Error ? err.message : String(err) });
}
