// Which workers have a client holding a lock right now, as far as the history
// says: from an acquire's ok until that process's next release invoke (or until
// it is retired by an unknown outcome). The pause nemesis aims at them, as Jepsen
// aims at primaries: freezing a process that holds nothing proves nothing.
import type { UnindexedEvent } from "../store/index.ts";

export class HoldTracker {
  private readonly holding = new Set<number>();

  constructor(private readonly workerOf: (process: number) => string | undefined) {}

  observe(events: readonly UnindexedEvent[]): void {
    for (const e of events) {
      if (typeof e.process !== "number") continue;
      if (e.f === "acquire" && e.type === "ok") this.holding.add(e.process);
      else if ((e.f === "release" && e.type === "invoke") || e.type === "info") this.holding.delete(e.process);
    }
  }

  /** Workers with at least one client holding a lock. */
  workers(): string[] {
    const names = new Set<string>();
    for (const p of this.holding) {
      const w = this.workerOf(p);
      if (w) names.add(w);
    }
    return [...names];
  }
}
