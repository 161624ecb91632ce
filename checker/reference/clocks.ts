// docs/anomalies.md "Clocks that disagree": run.json's `clock_error` gives, for
// each process, how far its clock may be off (in ms; `default_ms` for the
// processes it does not list). Each instant of that process lies somewhere
// within that distance of the time written. A finding is certain when it holds
// for every such placement, possible when it holds for some.
//
// The rules that read times compare an operation's ok (where a certain span
// starts, where an acquire is known granted) with an invoke (where a span ends,
// plus a TTL or at a release; where a later acquire began). So every placement
// is judged by its two extremes: invokes earlier and completions later (the
// placement least favourable to any such finding: what survives it is certain),
// and invokes later and completions earlier (the most favourable: what appears
// only there is possible). In the second an operation's completion is never put
// before its own invoke: where they would cross, both go to their midpoint,
// which is within the bound of each.
//
// A resource log's times stay as written: its order is what the writes' rules
// read. Where there is a log, the writes' and reads' times stay as written too
// (a decision is matched to the write whose invoke and completion hold its
// time), and the history's own proofs of write order, which read those times,
// are left out (writes.ts, `placed`). Without a log the writes are ordered by
// their times, and move like the rest.
import { BadInput } from "../../lib/index.ts";
import type { Event, Op, Run, Value } from "./types.ts";

export interface ClockBounds {
  defaultMs: number;
  byProcess: Map<number, number>;
}

/** run.json's clock_error; null when absent or all zero. A malformed one is bad input: checked without it, possible findings would pass for certain. */
export function clockBounds(raw: unknown): ClockBounds | null {
  if (raw === undefined) return null;
  const bad = (what: string) => new BadInput(`run.json: clock_error${what}`);
  const isMs = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x >= 0;
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw bad(` must be an object {"default_ms": n, "by_process": {...}}`);
  const r = raw as Value;
  if (!isMs(r.default_ms)) throw bad(`.default_ms must be a number of ms >= 0, not ${JSON.stringify(r.default_ms)}`);
  const listed = r.by_process;
  if (!listed || typeof listed !== "object" || Array.isArray(listed)) throw bad(".by_process must be an object of process numbers to ms");
  const byProcess = new Map<number, number>();
  for (const [p, ms] of Object.entries(listed as Value)) {
    if (!/^(0|[1-9][0-9]*)$/.test(p)) throw bad(`.by_process: ${JSON.stringify(p)} is not a process number`);
    if (!isMs(ms)) throw bad(`.by_process[${JSON.stringify(p)}] must be a number of ms >= 0, not ${JSON.stringify(ms)}`);
    byProcess.set(Number(p), ms);
  }
  return r.default_ms > 0 || [...byProcess.values()].some((ms) => ms > 0) ? { defaultMs: r.default_ms, byProcess } : null;
}

/** The run with every operation's instants moved: `worst` for certain findings, else for possible ones. */
export function placeRun(run: Run, clock: ClockBounds, worst: boolean): Run {
  const moved = (e: Event, time: number): Event => ({ ...e, time });
  const ops: Op[] = run.ops.map((op) => {
    const stays = run.decisions !== null && (op.f === "write" || op.f === "read");
    const b = stays ? 0 : (clock.byProcess.get(op.process) ?? clock.defaultMs) * 1e6;
    const inv = op.invoke.time;
    if (op.done === null) return { ...op, invoke: moved(op.invoke, worst ? inv - b : inv + b) };
    const done = op.done.time;
    if (worst) return { ...op, invoke: moved(op.invoke, inv - b), done: moved(op.done, done + b) };
    if (inv + b <= done - b) return { ...op, invoke: moved(op.invoke, inv + b), done: moved(op.done, done - b) };
    const mid = (inv + done) / 2;
    return { ...op, invoke: moved(op.invoke, mid), done: moved(op.done, mid) };
  });
  // Decisions are copied too: the writes' rules note on each the operation that sent it.
  return { ...run, ops, placed: true, decisions: run.decisions?.map((d) => ({ ...d })) ?? null, warnings: [...run.warnings], unknownReasons: [...run.unknownReasons] };
}
