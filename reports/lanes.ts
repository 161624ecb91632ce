// Which timeline lane each client process is drawn in. One lane per process reads
// best, but a process that got `info` retires and its client carries on under a new
// number, so a long faulty run can have thousands of processes. Past `maxLanes`,
// processes whose lifetimes do not overlap share a lane (greedy interval colouring),
// which keeps one lane per concurrent client.
import type { HistoryEvent } from "../store/events.ts";

export interface Lanes {
  /** Lane index of each client process. */
  of: Map<number, number>;
  /** Each client process's first and last event's time. */
  span: Map<number, { first: number; last: number }>;
  /** Processes in each lane, in order of first event. */
  members: number[][];
  packed: boolean;
}

export function assignLanes(events: readonly HistoryEvent[], maxLanes: number): Lanes {
  const span = new Map<number, { first: number; last: number }>();
  for (const e of events) {
    if (typeof e.process !== "number") continue;
    const s = span.get(e.process);
    if (!s) span.set(e.process, { first: e.time, last: e.time });
    else {
      s.first = Math.min(s.first, e.time);
      s.last = Math.max(s.last, e.time);
    }
  }
  const procs = [...span.keys()].sort((a, b) => a - b);
  const of = new Map<number, number>();
  if (procs.length <= maxLanes) {
    procs.forEach((p, i) => of.set(p, i));
    return { of, span, members: procs.map((p) => [p]), packed: false };
  }
  const byStart = [...procs].sort((a, b) => span.get(a)!.first - span.get(b)!.first || a - b);
  const laneEnds: number[] = [];
  const members: number[][] = [];
  for (const p of byStart) {
    const s = span.get(p)!;
    let lane = laneEnds.findIndex((end) => end < s.first);
    if (lane < 0) {
      lane = laneEnds.length;
      laneEnds.push(s.last);
      members.push([p]);
    } else {
      laneEnds[lane] = s.last;
      members[lane].push(p);
    }
    of.set(p, lane);
  }
  return { of, span, members, packed: true };
}
