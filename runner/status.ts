// The one status line a run shows while it goes: elapsed and remaining time,
// operations ok/fail/info, and the faults in force. On a terminal it redraws in
// place; in a log (CI) it prints a line every few seconds.
import type { UnindexedEvent } from "../store/events.ts";

export class StatusLine {
  private counts = { ok: 0, fail: 0, info: 0 };
  private timer: NodeJS.Timeout | null = null;
  private readonly tty = Boolean(process.stderr.isTTY);

  constructor(private readonly elapsedS: () => number, private readonly limitS: number, private readonly faults: () => string[]) {}

  count(events: readonly UnindexedEvent[]): void {
    for (const e of events) if (e.process !== "nemesis" && e.type !== "invoke" && e.type !== "notice") this.counts[e.type]++;
  }

  start(): void {
    this.timer = setInterval(() => this.draw(), this.tty ? 500 : 5000);
  }

  line(): string {
    const t = Math.floor(this.elapsedS());
    const left = Math.max(0, Math.ceil(this.limitS - this.elapsedS()));
    const faults = this.faults();
    const { ok, fail, info } = this.counts;
    return `[${t}s, ${left}s left] ok ${ok} fail ${fail} info ${info} | faults: ${faults.length ? faults.join(", ") : "none"}`;
  }

  private draw(): void {
    if (this.tty) process.stderr.write(`\r\x1b[2K${this.line()}`);
    else process.stderr.write(this.line() + "\n");
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.tty) process.stderr.write(`\r\x1b[2K`);
  }
}
