// A large file cut into chunks that threads read side by side: chunk k holds the
// lines that start in bytes [from + k * size, from + (k + 1) * size), so a line
// belongs to exactly one chunk, and each reader finds its chunks' lines from the
// bytes alone, with no word from the others (store/reader-thread.ts, stripes).
import { readSync } from "node:fs";

const NEWLINE = 10;

/** How many chunks the bytes [from, fileSize) make. */
export function chunkCount(fileSize: number, from: number, size: number): number {
  return Math.max(0, Math.ceil((fileSize - from) / size));
}

/**
 * Hands each line of chunk `k` to `line` (bytes buf[start, end) without the
 * newline, valid only during the call; `offset` is where it starts in the file).
 * `from` must be a line start. Returns false when the file ends in the chunk
 * without a newline (a last line cut short or just missing it), whose bytes are
 * not handed over: only a reader of the whole file can tell which.
 */
export function chunkLines(fd: number, fileSize: number, from: number, size: number, k: number, scratch: { buf: Buffer },
  line: (buf: Buffer, start: number, end: number, offset: number) => void): boolean {
  const lo = from + k * size;
  const hi = Math.min(lo + size, fileSize);
  // A line starts in [lo, hi) where a newline stands in [lo - 1, hi - 1]; the first chunk starts at a line.
  let base = k === 0 ? lo : lo - 1;
  let have = fill(fd, scratch, 0, hi - base, base);
  let s: number;
  if (k === 0) s = 0;
  else {
    const nl = scratch.buf.indexOf(NEWLINE);
    if (nl < 0 || nl >= have) return true;
    s = nl + 1;
  }
  for (;;) {
    if (base + s >= hi) return true;
    const buf = scratch.buf;
    // Bytes past `have` are stale: a newline found there is none.
    const nl = buf.indexOf(NEWLINE, s);
    if (nl >= 0 && nl < have) {
      line(buf, s, nl, base + s);
      s = nl + 1;
      continue;
    }
    // The chunk's last line goes on past what was read: read on to its newline.
    if (base + have >= fileSize) return false;
    if (s > 0) {
      buf.copy(buf, 0, s, have);
      have -= s;
      base += s;
      s = 0;
    }
    have += fill(fd, scratch, have, Math.min(64 << 10, fileSize - base - have), base + have);
  }
}

/** Reads `bytes` from file position `at` into scratch.buf at `into`, growing it as needed; returns the bytes read. */
function fill(fd: number, scratch: { buf: Buffer }, into: number, bytes: number, at: number): number {
  if (into + bytes > scratch.buf.length) {
    const bigger = Buffer.allocUnsafe(Math.max(into + bytes, scratch.buf.length * 2));
    scratch.buf.copy(bigger, 0, 0, into);
    scratch.buf = bigger;
  }
  let done = 0;
  while (done < bytes) {
    const n = readSync(fd, scratch.buf, into + done, bytes - done, at + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}
