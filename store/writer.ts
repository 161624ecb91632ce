// Writes history.ndjson as a run goes. Each batch is written with a synchronous
// write, so the lines are with the kernel before anything else happens: a run
// that is killed leaves a prefix the checker can read. Events from different
// workers arrive slightly out of time order; `finish` sorts the file by
// (time, index) and numbers the events again, as docs/history-format.md wants of a
// whole run.
import { openSync, writeSync, closeSync, renameSync, fsyncSync } from "node:fs";
import type { HistoryEvent, HistoryHeader, UnindexedEvent } from "./events.ts";

export class HistoryWriter {
  private fd: number;
  private readonly events: HistoryEvent[] = [];
  private closed = false;

  constructor(private readonly path: string, private readonly header: HistoryHeader) {
    this.fd = openSync(path, "w");
    writeSync(this.fd, JSON.stringify(header) + "\n");
  }

  get count(): number {
    return this.events.length;
  }

  append(batch: readonly UnindexedEvent[]): void {
    if (this.closed || batch.length === 0) return;
    let text = "";
    for (const e of batch) {
      const event = { index: this.events.length, ...e } as HistoryEvent;
      this.events.push(event);
      text += JSON.stringify(event) + "\n";
    }
    writeSync(this.fd, text);
  }

  /** Sort by time, renumber, and replace the file in one rename. Returns the final events. */
  finish(): HistoryEvent[] {
    if (this.closed) return this.events;
    this.closed = true;
    closeSync(this.fd);
    this.events.sort((a, b) => a.time - b.time || a.index - b.index);
    this.events.forEach((e, i) => (e.index = i));
    const tmp = `${this.path}.sorting`;
    const fd = openSync(tmp, "w");
    const lines = [JSON.stringify(this.header)];
    for (const e of this.events) lines.push(JSON.stringify(e));
    writeSync(fd, lines.join("\n") + "\n");
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, this.path);
    return this.events;
  }
}
