// streamHistoryInWorker (store/reader-worker.ts) reads a history in a worker
// thread, streamHistoryInWorkers in two at once by chunks, and each must be
// streamHistory in every respect the checker sees: the same
// events in the same order (fields and nemesis events whole), the same sinks for a
// reordered file, the same warnings and checkpoints, and the same BadInput naming
// the same line. Small files and batches of more than one make both agree here;
// the checker uses the worker for large files only.
import { closeSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateRun } from "../../bench/checker-history.ts";
import { BadInput } from "../../lib/index.ts";
import { chunkCount, chunkLines } from "../../store/chunks.ts";
import { resourceLogInWorker, streamHistoryInWorker, streamHistoryInWorkers } from "../../store/reader-worker.ts";
import { streamHistory, streamResourceLog, type StreamOptions } from "../../store/reader.ts";
import type { HistoryEvent } from "../../store/events.ts";
import { tempRunDir } from "../helpers.ts";

const FIXTURES = join(import.meta.dirname, "../../histories/fixtures");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Stream = typeof streamHistory;

/** Everything a reader hands over, in order; or the error it threw. */
async function read(stream: Stream, path: string, options: StreamOptions = {}): Promise<unknown> {
  const seen: unknown[] = [];
  try {
    const out = await stream(path, (header) => {
      seen.push({ sink: header });
      // Without data the sink may get anything as a write's data.
      return (e) => seen.push({ ...e, data: options.data === false ? "-" : e.data });
    }, { ...options, nemesis: (e: HistoryEvent) => seen.push({ nemesis: e }) });
    return { seen, out };
  } catch (err) {
    return { seen: "-", error: err instanceof BadInput ? `BadInput: ${err.message}` : String(err) };
  }
}

async function same(path: string, options: StreamOptions = {}): Promise<void> {
  expect(await read(streamHistoryInWorker, path, options)).toEqual(await read(streamHistory, path, options));
}

/** The decisions a resource-log reader hands over, its result, or the error it threw. */
async function readLog(inWorker: boolean, path: string): Promise<unknown> {
  const seen: unknown[] = [];
  const sink = (d: object): void => void seen.push({ ...d });
  try {
    // The thread is started first and decodes ahead, as the checker starts it.
    const out = inWorker ? await resourceLogInWorker(path, { checkpointEvery: 5, maxAhead: 2 }).start(sink) : await streamResourceLog(path, sink, { checkpointEvery: 5 });
    return { seen, out };
  } catch (err) {
    // What went to the sink before an error is thrown away by the checker: a thread may hand over less of it.
    return { seen: "-", error: err instanceof BadInput ? `BadInput: ${err.message}` : String(err) };
  }
}

/** A copy of `path`'s history with `edit` applied to its lines, in a new directory. */
function edited(path: string, edit: (lines: string[]) => string[], name = "history.ndjson"): string {
  const dir = tempRunDir("fc-hw-");
  dirs.push(dir);
  const out = join(dir, name);
  writeFileSync(out, edit(readFileSync(path, "utf8").split("\n")).join("\n"));
  return out;
}

describe("streamHistoryInWorker", () => {
  it("hands over what streamHistory does for every fixture, with checkpoints and without data", async () => {
    const runs = ["good", "bad"].flatMap((kind) => readdirSync(join(FIXTURES, kind)).map((name) => join(FIXTURES, kind, name, "history.ndjson")));
    await Promise.all(runs.map((path, i) => same(path, i % 2 === 0 ? { checkpointEvery: 7 } : { data: false })));
  }, 120_000);

  it("runs from the TypeScript source too (tsx loaded inside the thread), as a developer's `tsx cli/check.ts` does", async () => {
    // The suite starts entries from dist/ (vitest.config.ts); without that, the thread runs reader-thread.ts.
    const was = process.env.FENCECHECK_ENTRIES;
    delete process.env.FENCECHECK_ENTRIES;
    try {
      await same(join(FIXTURES, "good", readdirSync(join(FIXTURES, "good"))[0], "history.ndjson"));
    } finally {
      process.env.FENCECHECK_ENTRIES = was;
    }
  }, 60_000);

  it("agrees over many batches of a generated run", async () => {
    const dir = tempRunDir("fc-hw-");
    dirs.push(dir);
    generateRun(dir, { events: 40_000, seed: 5, keys: 300, clients: 60, workers: 3, fencing: true, renew: true });
    await same(join(dir, "history.ndjson"), { checkpointEvery: 1000, data: false });
  }, 60_000);

  it("agrees on broken, cut-short and reordered files", async () => {
    const base = join(FIXTURES, "good/synthetic-redis-fenced-write-pause-fence-on/history.ndjson");
    await same(edited(base, (l) => l.map((x, i) => (i === 40 ? '{"index":39,"time":oops}' : x))));
    await same(edited(base, (l) => l.map((x, i) => (i === 30 ? x.replace('"ok"', '"okay"') : x))));
    await same(edited(base, (l) => [...l.slice(0, -2), l[l.length - 2].slice(0, 20)]));
    await same(edited(base, (l) => l.map((x, i) => (i === 20 ? l[21] : i === 21 ? l[20] : x))), { checkpointEvery: 5 });
    await same(edited(base, () => [""]));
    expect(await read(streamHistoryInWorker, join(FIXTURES, "no-such-run/history.ndjson"))).toEqual(await read(streamHistory, join(FIXTURES, "no-such-run/history.ndjson")));
  }, 60_000);

  it("reads resource logs as streamResourceLog does: generated, broken, with a field of another layout, cut short", async () => {
    const dir = tempRunDir("fc-hw-");
    dirs.push(dir);
    generateRun(dir, { events: 40_000, seed: 6, keys: 5, clients: 30, workers: 3, fencing: false, workload: "counter" });
    const log = join(dir, "resource.ndjson");
    const paths = [
      log,
      edited(log, (l) => l.map((x, i) => (i === 300 ? x.replace('"accepted":true', '"accepted":1') : x)), "resource.ndjson"),
      edited(log, (l) => l.map((x, i) => (i % 50 === 0 ? x.replace(',"', ', "') : x)), "resource.ndjson"),
      edited(log, (l) => [...l.slice(0, -2), l[l.length - 2].slice(0, 30)], "resource.ndjson"),
      // Committed decisions (format 2): each line's place, and outcomes unknown.
      edited(log, (l) => l.map((x, i) => (i % 7 === 0 ? x.replace('"accepted":true', '"accepted":null').replace(/}$/, ',"order":null}') : x.replace(/}$/, `,"order":${i + 1}}`))), "resource.ndjson"),
    ];
    for (const path of paths) expect(await readLog(true, path)).toEqual(await readLog(false, path));
  }, 60_000);
});

/**
 * What the checker keeps of a read: what the last sink got (a sink given up for a
 * fresh one is dropped, with the nemesis events before it), and the result or error.
 */
function kept(r: unknown): unknown {
  const { seen, ...rest } = r as { seen: unknown[] | string };
  if (typeof seen === "string") return r;
  const isSink = (x: unknown): boolean => typeof x === "object" && x !== null && "sink" in x;
  const sinks = seen.filter(isSink).length;
  let last = seen.length - 1;
  while (last > 0 && !isSink(seen[last])) last--;
  return { ...rest, seen: seen.slice(last), sinks };
}

/** streamHistoryInWorkers with chunks of `chunkBytes`, against streamHistory; how many sinks it asked for. */
async function sameByChunks(path: string, chunkBytes: number, options: StreamOptions = {}): Promise<number> {
  const striped = kept(await read((p, sinkFor, o) => streamHistoryInWorkers(p, sinkFor, o, chunkBytes), path, options)) as { sinks?: number };
  const serial = kept(await read(streamHistory, path, options)) as { sinks?: number };
  expect({ ...striped, sinks: 0 }).toEqual({ ...serial, sinks: 0 });
  return striped.sinks ?? 0;
}

describe("streamHistoryInWorkers", () => {
  it("reads a history in order by chunks in one pass (one sink), whatever the chunks' size, as streamHistory does", async () => {
    const dir = tempRunDir("fc-hw-");
    dirs.push(dir);
    generateRun(dir, { events: 20_000, seed: 7, keys: 300, clients: 60, workers: 3, fencing: true, renew: true });
    const path = join(dir, "history.ndjson");
    // Chunks shorter than a line (most hold no line start), of a few lines, of a batch and more, and one for the whole file.
    for (const chunk of [37, 1000, 100_000, 3 << 20]) expect(await sameByChunks(path, chunk, { checkpointEvery: 500, data: false })).toBe(1);
    expect(await sameByChunks(path, 4096)).toBe(1);
  }, 120_000);

  it("agrees on every fixture, nemesis events whole, by chunks of a few lines", async () => {
    const runs = ["good", "bad"].flatMap((kind) => readdirSync(join(FIXTURES, kind)).map((name) => join(FIXTURES, kind, name, "history.ndjson")));
    for (const [i, path] of runs.entries()) await sameByChunks(path, 300 + 97 * i, i % 2 === 0 ? { checkpointEvery: 7 } : { data: false });
  }, 120_000);

  it("hands a file it cannot take by chunks to streamHistory: broken, out of order, cut short, no newline at its end, no header", async () => {
    const base = join(FIXTURES, "good/synthetic-redis-fenced-write-pause-fence-on/history.ndjson");
    const cases = [
      edited(base, (l) => l.map((x, i) => (i === 40 ? '{"index":39,"time":oops}' : x))),
      edited(base, (l) => l.map((x, i) => (i === 30 ? x.replace('"ok"', '"okay"') : x))),
      edited(base, (l) => [...l.slice(0, -2), l[l.length - 2].slice(0, 20)]),
      // A whole last line without its newline is kept.
      edited(base, (l) => l.slice(0, -1)),
      edited(base, (l) => l.map((x, i) => (i === 20 ? l[21] : i === 21 ? l[20] : x))),
      edited(base, (l) => l.map((x, i) => (i === 25 ? x.replace(/"index":\d+/, '"index":7') : x))),
      edited(base, (l) => ["\ufeff" + l[0], ...l.slice(1)]),
      edited(base, () => [""]),
      edited(base, (l) => l.slice(0, 1)),
    ];
    for (const path of cases) for (const chunk of [200, 5000]) await sameByChunks(path, chunk, { checkpointEvery: 5 });
    expect(kept(await read((p, s, o) => streamHistoryInWorkers(p, s, o, 100), join(FIXTURES, "no-such-run/history.ndjson")))).toEqual(kept(await read(streamHistory, join(FIXTURES, "no-such-run/history.ndjson"))));
  }, 120_000);
});

describe("chunks (store/chunks.ts)", () => {
  it("cut a file at line starts, each line in one chunk, and read no further than the size they are given (a live run's file grows)", () => {
    const dir = tempRunDir("fc-chunks-");
    dirs.push(dir);
    const path = join(dir, "lines");
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i} ${"x".repeat(i % 37)}`);
    writeFileSync(path, lines.join("\n") + "\n");
    const size = statSync(path).size;
    const fd = openSync(path, "r");
    try {
      const read = (fileSize: number, chunk: number): { got: string[]; whole: boolean[] } => {
        const got: string[] = [];
        const whole: boolean[] = [];
        for (let k = 0; k < chunkCount(fileSize, 0, chunk); k++) {
          whole.push(chunkLines(fd, fileSize, 0, chunk, k, { buf: Buffer.alloc(4) }, (b, s, e) => void got.push(b.toString("utf8", s, e))));
        }
        return { got, whole };
      };
      for (const chunk of [7, 64, 1000, size]) {
        const all = read(size, chunk);
        expect(all.got).toEqual(lines);
        expect(all.whole.every(Boolean)).toBe(true);
      }
      // Ten bytes short of the end: the last line is cut, so it is not handed over, and the chunk it starts in says so.
      const cut = read(size - 10, 64);
      expect(cut.got).toEqual(lines.slice(0, -1));
      expect(cut.whole.filter((w) => !w)).toHaveLength(1);
    } finally {
      closeSync(fd);
    }
  });
});
