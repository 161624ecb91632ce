// resource.ndjson, written as docs/history-format.md defines it. Every line is
// written with a synchronous write on an O_APPEND descriptor before the client gets
// its answer: once a client has seen a decision, the kernel has it, and a crash of
// this process cannot lose it. `seq` only moves when the line is written, so a
// failed write leaves no gap.
import { closeSync, openSync, writeSync } from "node:fs";
import type { RunClock } from "../store/clock.ts";
import type { ResourceDecision } from "../store/events.ts";

export type DecisionFields = Omit<ResourceDecision, "seq" | "time">;

export class DecisionLog {
  private seq = 0;
  private fd: number | null;

  constructor(path: string, private readonly clock: RunClock) {
    this.fd = openSync(path, "a");
  }

  /** Stamps, numbers and appends one decision; throws if it could not be written. */
  append(fields: DecisionFields): ResourceDecision {
    if (this.fd === null) throw new Error("the decision log is closed");
    // Spelled out so the line's fields come in the contract's order.
    const d: ResourceDecision = {
      seq: this.seq + 1,
      time: this.clock(),
      op: fields.op,
      key: fields.key,
      process: fields.process,
      owner: fields.owner,
      fence: fields.fence,
      max_before: fields.max_before,
      accepted: fields.accepted,
      data: fields.data,
      fencing: fields.fencing,
      // A semaphore's write says against how many permits and higher fences it was judged.
      ...(fields.permits === undefined ? {} : { permits: fields.permits, higher: fields.higher }),
      // A store's place for it among its key's decisions (format 2's committed decisions), last.
      ...(fields.order === undefined ? {} : { order: fields.order }),
    };
    const line = Buffer.from(JSON.stringify(d) + "\n");
    let written = 0;
    while (written < line.length) written += writeSync(this.fd, line, written, line.length - written);
    this.seq = d.seq;
    return d;
  }

  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }
}
