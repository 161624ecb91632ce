// The one-operation-at-a-time rules of docs/history-format.md (a process invokes
// only when it has no operation outstanding, completes only what it invoked, and
// never invokes again after an info), checked as the reader hands the events over
// in time order; and whether a file's events come in that order as they stand
// (InOrder).
import { INFO_TYPE, INVOKE_TYPE, typeName, type EventFields } from "./event-fields.ts";

interface ProcessState {
  /** Line of the outstanding invoke and its f, or 0. */
  open: number;
  openF: string;
  /** Lines of the last completed invoke (and its f) and of its completion, or 0. */
  lastInvoke: number;
  lastF: string;
  lastDone: number;
  /** Line of the `info` that retired the process, or 0. */
  retired: number;
}

/** The one-operation-at-a-time rules of docs/history-format.md, fed the events in time order. */
export class StructureCheck {
  // Process numbers are nearly always small: an array beats a map on every event.
  private readonly small: (ProcessState | undefined)[] = [];
  private readonly others = new Map<number, ProcessState>();

  private state(p: number): ProcessState {
    const small = Number.isInteger(p) && p >= 0 && p < 1 << 16;
    let s = small ? this.small[p] : this.others.get(p);
    if (!s) {
      s = { open: 0, openF: "", lastInvoke: 0, lastF: "", lastDone: 0, retired: 0 };
      if (small) {
        while (this.small.length < p) this.small.push(undefined);
        this.small[p] = s;
      } else this.others.set(p, s);
    }
    return s;
  }

  /** What is wrong with `e` (on file line `line`) after the events before it, or null. */
  step(e: EventFields, line: number): string | null {
    // Nemesis events and notices are no operations of a process.
    if (e.nemesis || e.notice) return null;
    const s = this.state(e.process);
    if (e.type === INVOKE_TYPE) {
      if (s.retired) return `process ${e.process} invokes "${e.f}" after its operation got info on line ${s.retired}; a process that got info never issues another`;
      if (s.open) return `process ${e.process} invokes "${e.f}" while its "${s.openF}" invoked on line ${s.open} is still outstanding`;
      s.open = line;
      s.openF = e.f;
      return null;
    }
    if (!s.open) {
      if (s.lastInvoke && s.lastF === e.f) {
        return `second completion (${typeName(e.type)}) of the "${e.f}" process ${e.process} invoked on line ${s.lastInvoke}, already completed on line ${s.lastDone}`;
      }
      return `process ${e.process} completes "${e.f}" with ${typeName(e.type)} but has no open invoke`;
    }
    if (s.openF !== e.f) return `process ${e.process} completes "${e.f}" but its open invoke on line ${s.open} is "${s.openF}"`;
    s.lastInvoke = s.open;
    s.lastF = s.openF;
    s.lastDone = line;
    s.open = 0;
    if (e.type === INFO_TYPE) s.retired = line;
    return null;
  }
}

/**
 * Whether events come as a finished run stores them, so that one pass in file
 * order delivers them in (time, index) order: indexes 0, 1, 2, ... and times that
 * never go back. The one test of it, for every reader.
 */
export class InOrder {
  private next = 0;
  private lastTime = -1;

  /** Whether `e` comes next; the event is then taken as the last one. */
  take(e: Pick<EventFields, "index" | "time">): boolean {
    if (e.index !== this.next || e.time < this.lastTime) return false;
    this.next++;
    this.lastTime = e.time;
    return true;
  }
}
