// Where acknowledged spans are kept: spans.json in the live run directory, one
// OTLP JSON line per accepted request, as the Collector's file exporter writes,
// so `fencecheck traces spans.json` re-checks the stream offline. A request is
// answered 200 only once its line is written and fsync'ed. Requests that arrive
// together share one write and one fsync (group commit): an fsync per request
// would bound the receiver by the disk's flush rate, not by the check.
import { closeSync, createReadStream, fstatSync, fsyncSync, ftruncateSync, openSync, readSync } from "node:fs";
import { fdatasync, write } from "node:fs";
import { createInterface } from "node:readline";
import { promisify } from "node:util";

const writeAsync = promisify(write);
const fdatasyncAsync = promisify(fdatasync);

export class Spool {
  private readonly fd: number;
  /** Lines written so far (the next one's number is lines + 1). */
  lines = 0;
  bytes = 0;
  /** 1 when the file ended in a line cut short (a crash mid-write), cut back on opening. */
  readonly tornCut: number;
  private queue: Array<{ text: string; done: (err?: Error) => void }> = [];
  private flushing = false;

  /** Opens (or makes) the spool; a last line without its newline was never acknowledged, and is cut off. */
  constructor(readonly path: string) {
    this.fd = openSync(path, "a+");
    const size = fstatSync(this.fd).size;
    const whole = size === 0 ? 0 : lastNewline(this.fd, size) + 1;
    this.tornCut = whole < size ? 1 : 0;
    if (this.tornCut) {
      ftruncateSync(this.fd, whole);
      fsyncSync(this.fd);
    }
    this.bytes = whole;
  }

  /** Each whole line already in the spool, with its number, read as a stream (the spool can be gigabytes). */
  async replay(each: (line: string, number: number) => void): Promise<void> {
    if (this.bytes === 0) return;
    const lines = createInterface({ input: createReadStream(this.path, { start: 0, end: this.bytes - 1 }), crlfDelay: Infinity });
    for await (const line of lines) {
      this.lines++;
      if (line.trim() !== "") each(line, this.lines);
    }
  }

  /** Reserves the next line's number; the line must then be `append`ed, in the same order. */
  nextLine(): number {
    return ++this.lines;
  }

  /** Resolves once `line` (without its newline) is on disk. */
  append(line: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ text: line + "\n", done: (err) => (err ? reject(err) : resolve()) });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.queue.length) {
      const batch = this.queue;
      this.queue = [];
      const buf = Buffer.from(batch.map((b) => b.text).join(""));
      try {
        let off = 0;
        while (off < buf.length) off += (await writeAsync(this.fd, buf, off, buf.length - off)).bytesWritten;
        await fdatasyncAsync(this.fd);
        this.bytes += buf.length;
        for (const b of batch) b.done();
      } catch (err) {
        for (const b of batch) b.done(err as Error);
      }
    }
    this.flushing = false;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The offset of the file's last newline, or -1: read backwards in blocks. */
function lastNewline(fd: number, size: number): number {
  const block = Buffer.alloc(64 * 1024);
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - block.length);
    const n = readSync(fd, block, 0, end - start, start);
    const i = block.subarray(0, n).lastIndexOf(0x0a);
    if (i >= 0) return start + i;
    end = start;
  }
  return -1;
}
