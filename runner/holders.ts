// Which locks are held right now, as far as the history says: from an acquire's
// ok until that process's next release invoke (or until it is retired by an
// unknown outcome), with the worker its client runs in and the servers that
// granted it where the acquire's value names them (Redlock's `granted`). The
// nemeses aim at them (nemesis/aim.ts), as Jepsen aims at primaries: freezing a
// process that holds nothing, or killing a node that granted nothing, proves nothing.
// Each hold also says whether its write is still to come: a fault that lands
// after a hold's write delays only its release, and a read hold (an rw lock's
// reader) writes nothing at all.
import type { UnindexedEvent } from "../store/index.ts";
import type { HeldLock } from "../nemesis/index.ts";

export class HoldTracker {
  /** Holding processes, with the servers that granted each hold (null: the service as a whole) and whether a write of it is still to come. */
  private readonly holding = new Map<number, { granted: string[] | null; due: boolean }>();

  constructor(private readonly workerOf: (process: number) => string | undefined) {}

  observe(events: readonly UnindexedEvent[]): void {
    for (const e of events) {
      if (typeof e.process !== "number") continue;
      if (e.f === "acquire" && e.type === "ok") this.holding.set(e.process, { granted: grantedBy(e.value), due: e.value?.mode !== "read" });
      else if (e.f === "write" && e.type === "invoke") {
        const h = this.holding.get(e.process);
        if (h) h.due = false;
      }
      // A re-entry's release (depth above 1) leaves its outer hold held.
      else if ((e.f === "release" && e.type === "invoke" && !(Number(e.value?.depth) > 1)) || e.type === "info") this.holding.delete(e.process);
    }
  }

  holds(): HeldLock[] {
    const out: HeldLock[] = [];
    for (const [p, { granted, due }] of this.holding) {
      const worker = this.workerOf(p);
      if (worker) out.push({ worker, granted, writeDue: due });
    }
    return out;
  }
}

function grantedBy(value: unknown): string[] | null {
  const g = (value as { granted?: unknown } | null)?.granted;
  return Array.isArray(g) && g.every((s) => typeof s === "string") ? g : null;
}
