// Checkpoints kept by the checker's pass (store/reader.ts streamHistory and
// streamResourceLog with `checkpointEvery`): each names the byte offset where a
// line starts, whatever characters the lines before it hold, and that line's
// index (or seq) and time; a history out of time order gets none.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { streamHistory, streamResourceLog, type Checkpoint } from "../../store/reader.ts";

const dirs: string[] = [];
const tempRunDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const header = { format: 1, kind: "header", run: "ünïcode/1", workload: "fenced-write", backend: "sim", fencing: true };

function history(n: number): object[] {
  const events: object[] = [];
  for (let i = 0; i < n; i += 2) {
    const p = i % 3;
    // Non-ASCII keys and owners on some lines: characters and bytes part ways.
    const key = i % 4 === 0 ? "clé-ß" : "k1";
    events.push({ index: i, time: 1000 + i * 10, process: p, type: "invoke", f: "acquire", key, value: { ttl_ms: 100 } });
    events.push({ index: i + 1, time: 1005 + i * 10, process: p, type: "ok", f: "acquire", key, value: { owner: `c${p}-h${i}-ö`, fence: i, ttl_ms: 100 } });
  }
  return events;
}

/** The line starting at `offset`, parsed. */
function lineAt(bytes: Buffer, offset: number): Record<string, unknown> {
  const end = bytes.indexOf(10, offset);
  return JSON.parse(bytes.toString("utf8", offset, end < 0 ? bytes.length : end)) as Record<string, unknown>;
}

describe("checkpoints", () => {
  it("point at the start of every k-th event's line, with its index and time, across non-ASCII lines", async () => {
    const dir = tempRunDir("fc-cp-");
    const path = join(dir, "history.ndjson");
    const events = history(40);
    writeFileSync(path, [header, ...events].map((e) => JSON.stringify(e)).join("\n") + "\n");
    const seen: number[] = [];
    const out = await streamHistory(path, () => (e) => seen.push(e.index), { checkpointEvery: 3 });
    expect(seen.length).toBe(40);
    const cps = out.checkpoints as Checkpoint[];
    expect(cps.map((c) => c.n)).toEqual([0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39]);
    const bytes = readFileSync(path);
    for (const c of cps) {
      const line = lineAt(bytes, c.offset);
      expect([line.index, line.time]).toEqual([c.n, c.time]);
    }
  });

  it("are none (null) for a history out of time order, which is read whole", async () => {
    const dir = tempRunDir("fc-cp-");
    const path = join(dir, "history.ndjson");
    const events = history(10);
    [events[3], events[5]] = [events[5], events[3]];
    writeFileSync(path, [header, ...events].map((e) => JSON.stringify(e)).join("\n") + "\n");
    const out = await streamHistory(path, () => () => {}, { checkpointEvery: 2 });
    expect(out.checkpoints).toBeNull();
    const plain = await streamHistory(path, () => () => {});
    expect(plain.checkpoints).toBeUndefined();
  });

  it("mark every k-th decision of the resource log by seq and time", async () => {
    const dir = tempRunDir("fc-cp-");
    const path = join(dir, "resource.ndjson");
    const lines = Array.from({ length: 25 }, (_, i) => ({
      seq: i + 1, time: 500 + i, op: i % 2 ? "read" : "write", key: i % 3 ? "k1" : "clé", process: 1, owner: i % 5 ? "c1-h1" : "ö-h2",
      fence: i, max_before: i === 0 ? null : i - 1, accepted: true, ...(i % 4 ? { data: `d${i}` } : {}), fencing: true,
    }));
    writeFileSync(path, lines.map((d) => JSON.stringify(d)).join("\n") + "\n");
    const got: unknown[] = [];
    const out = await streamResourceLog(path, (d) => got.push(d), { checkpointEvery: 4 });
    expect(got).toEqual(lines);
    const cps = out!.checkpoints!;
    expect(cps.map((c) => c.n)).toEqual([1, 5, 9, 13, 17, 21, 25]);
    const bytes = readFileSync(path);
    for (const c of cps) {
      const line = lineAt(bytes, c.offset);
      expect([line.seq, line.time]).toEqual([c.n, c.time]);
    }
  });
});
