// Everything the page draws, derived once from the run's files: operations, holds,
// fault windows, anomaly groups, and the lookups from a witness's event indexes and
// decision seqs to what they name.
import type { HistoryEvent, HistoryHeader, ResourceDecision, Results } from "../store/events.ts";
import type { ProcessMap } from "../store/process-map.ts";
import { faultWindows, type FaultWindow } from "./faults.ts";
import { lockOf, markModes, type LockView } from "./kinds.ts";
import { decisionsOfWrites, holdsOf, ordered, pairOps, type Hold, type Op } from "./ops.ts";
import { reportGroups, type AnomalyGroup } from "./results.ts";

export interface ReportInput {
  header: HistoryHeader;
  events: HistoryEvent[];
  decisions: ResourceDecision[] | null;
  results: Results;
  /** run.json's `processes`: the worker each process ran in (null or absent: the run did not record it). */
  processes?: ProcessMap | null;
}

export interface PageData {
  input: ReportInput;
  events: readonly HistoryEvent[];
  ops: Op[];
  orphans: HistoryEvent[];
  holds: Hold[];
  /** The lock kind beyond the mutex that the header names (null: a mutex's run, drawn as ever). */
  lock: LockView | null;
  windows: FaultWindow[];
  groups: AnomalyGroup[];
  decisions: readonly ResourceDecision[];
  decisionOf: Map<Op, ResourceDecision>;
  opOfEvent: Map<number, Op>;
  eventAt: Map<number, HistoryEvent>;
  decisionAt: Map<number, ResourceDecision>;
  /** Which worker ran each process (null: the run did not say). */
  processes: ProcessMap | null;
  /** First and last instant of the run that anything happened. */
  t0: number;
  t1: number;
}

export function pageData(input: ReportInput): PageData {
  const events = ordered(input.events);
  const decisions = input.decisions ?? [];
  let t0 = Infinity, t1 = -Infinity;
  for (const e of events) { if (e.time < t0) t0 = e.time; if (e.time > t1) t1 = e.time; }
  for (const d of decisions) { if (d.time < t0) t0 = d.time; if (d.time > t1) t1 = d.time; }
  if (t0 > t1) t0 = t1 = 0;

  const { ops, orphans } = pairOps(events);
  const opOfEvent = new Map<number, Op>();
  for (const op of ops) {
    opOfEvent.set(op.invoke.index, op);
    if (op.completion) opOfEvent.set(op.completion.index, op);
  }
  const lock = lockOf(input.header);
  const holds = holdsOf(ops, lock?.lock === "reentrant");
  if (lock?.lock === "rw") markModes(holds);
  return {
    input, events, ops, orphans, holds, lock,
    windows: faultWindows(events, t1),
    groups: reportGroups(input.results),
    decisions,
    decisionOf: decisionsOfWrites(ops, decisions),
    opOfEvent,
    eventAt: new Map(events.map((e) => [e.index, e])),
    decisionAt: new Map(decisions.map((d) => [d.seq, d])),
    processes: input.processes ?? null,
    t0, t1,
  };
}
