// Clocks that disagree (docs/anomalies.md "Clocks that disagree"). A run's
// history is on one clock; a trace's spans come from hosts whose wall clocks
// are each off by up to a bound the user gives (`fencecheck traces
// --clock-error`), which run.json carries per process. Every instant of a
// process may then lie anywhere within its bound of where it was written.
//
// The rules that read time (certain spans, fence-regression, the kinds' and
// liveness rules) are not rewritten for it: they are run twice on the same
// pairing with every operation's times moved, once to the placement that is
// worst for each finding and once to the placement that is best for it. A
// finding of the first is certain (it holds wherever within the bounds the
// instants lie); one only of the second is possible. Certain spans start at an
// ok and end at an invoke (plus a TTL, or at a release's invoke), and
// fence-regression compares an invoke with an earlier ok, so the worst
// placement moves each invoke earlier and each completion later by the
// process's bound, and the best the other way. The best placement never puts a
// completion before its own invoke: where the two would cross, both sit at
// their midpoint, which lies within both bounds.
//
// Times on the resource's log stay as written: the resource decides by its own
// order, which is what the writes' rules read. Where there is a log, the
// writes' and reads' times stay as written too (each decision is matched to the
// write that sent it by them), and the history's own proofs of which write came
// first, which read those times, are not made (history-proofs.ts): placed, the
// pairing says so (`clockPlaced`). Without a log the writes' order comes from
// their times, and they move like every other operation.
import { READ, WRITE, type Paired } from "./paired.ts";
import type { Ops, Holds } from "./table.ts";

/** run.json `clock_error`: a bound in ms for each process (by its number), and for the rest. */
export interface ClockBounds {
  default_ms: number;
  by_process: Record<string, number>;
}

/** Whether any process's clock may be off at all. */
export const anyError = (c: ClockBounds | undefined): c is ClockBounds =>
  c !== undefined && (c.default_ms > 0 || Object.values(c.by_process).some((ms) => ms > 0));

/** The bound of a process, in ns. */
export function boundOf(c: ClockBounds, process: number): number {
  return (c.by_process[String(process)] ?? c.default_ms) * 1e6;
}

/**
 * A copy of the pairing with every operation's invoke and completion moved:
 * `worst` (certain findings) moves invokes earlier and completions later by the
 * process's bound; otherwise the other way, never crossing. The copy shares
 * what the move does not touch, and has its own lists of warnings and unknown
 * reasons (the analyses add to them) and its own order of holds by grant.
 */
export function placed(m: Paired, c: ClockBounds, worst: boolean): Paired {
  const ops: Ops = Object.assign(Object.create(Object.getPrototypeOf(m.ops)), m.ops);
  const start = new Float64Array(m.ops.start.length);
  const done = new Float64Array(m.ops.doneTime.length);
  const logged = m.decisions !== null;
  for (let i = 0; i < m.ops.length; i++) {
    const f = m.ops.f[i];
    const b = logged && (f === WRITE || f === READ) ? 0 : boundOf(c, Number(m.ops.process[i]));
    const s = m.ops.start[i], d = m.ops.doneTime[i];
    if (worst) {
      start[i] = s - b;
      done[i] = d + b;
    } else if (!(d - b < s + b)) {
      start[i] = s + b;
      done[i] = d - b;
    } else start[i] = done[i] = (s + d) / 2;
  }
  ops.start = start;
  ops.doneTime = done;
  const holds: Holds = Object.assign(Object.create(Object.getPrototypeOf(m.holds)), m.holds, {
    endOrder: new Int32Array(m.holds.length),
    endOrderMade: new Int32Array(1),
  });
  return { ...m, ops, holds, clockPlaced: true, unknown: [...m.unknown], warnings: [...m.warnings] };
}
