// The first pass of a large run's report without a pass of its own: the digest
// (digest.ts) drawn from what the checker's pass left behind (checker/run.ts
// CheckedRun): the overview from the model's columns, which hold every operation's
// times, process, f and outcome; the nemesis events and the checkpoints into both
// files kept by the reader as it went. Same figures as digestRun's, at the cost of
// a walk over the columns instead of a read of the files.
import { ACQUIRE, FAIL, INFO, OK, WRITE, type CheckedRun } from "../checker/index.ts";
import { Buckets, OUTCOMES, rowOf } from "./buckets.ts";
import type { Digest } from "./digest.ts";

const OUTCOME_OK = OUTCOMES.indexOf("ok"), OUTCOME_FAIL = OUTCOMES.indexOf("fail");
const OUTCOME_STALE = OUTCOMES.indexOf("stale"), OUTCOME_INFO = OUTCOMES.indexOf("info");

/** null when the pass kept no checkpoints: none were asked for, or the history was out of time order (its file cannot be read by stretches). */
export function digestOfCheck(run: CheckedRun): Digest | null {
  const { model: m, nemesis, checkpoints } = run;
  if (checkpoints === null) return null;
  const { ops } = m;
  const events = m.events;
  const last = m.lastTime;
  // Every time the history holds is at most its last: buckets that never merge.
  const b = events > 0 ? Buckets.spanning(m.firstTime, last) : new Buckets(0);
  // The overview's row of each of the model's operation ids.
  const rows = m.fs.names.map(rowOf);
  const stale = m.errors.names.indexOf("stale-fence");
  let holds = 0;
  for (const e of nemesis) b.event(e.time);
  for (let i = 0; i < ops.length; i++) {
    const at = ops.start[i];
    const f = ops.f[i];
    const row = rows[f];
    const isAcquire = row === 0;
    if (ops.done[i] < 0) {
      // Still open at the end: unknown, with the latency reached so far (a lower bound).
      b.event(at);
      b.op(at, row, OUTCOME_INFO, (last - at) / 1e6, isAcquire);
      continue;
    }
    const o = ops.outcome[i];
    if (o === OK && f === ACQUIRE) holds++;
    const outcome = o === OK ? OUTCOME_OK : o === INFO ? OUTCOME_INFO
      : o === FAIL && f === WRITE && stale >= 0 && ops.error[i] === stale ? OUTCOME_STALE : OUTCOME_FAIL;
    b.completed(at, ops.doneTime[i], row, outcome, isAcquire);
  }
  let t0 = events > 0 ? m.firstTime : NaN, t1 = events > 0 ? last : 0;
  const ds = m.decisions;
  if (ds && ds.length > 0) {
    // The resource decides in time order: its first and last decisions give its span.
    const r0 = ds.time[0], r1 = Math.max(r0, ds.time[ds.length - 1]);
    if (Number.isNaN(t0) || r0 < t0) t0 = r0;
    if (r1 > t1) t1 = r1;
  }
  if (Number.isNaN(t0)) t0 = t1;
  return {
    header: m.header, events, ops: ops.length, holds, decisions: ds ? ds.length : null, t0, t1, buckets: b,
    nemesis, checkpoints, resourceCheckpoints: run.resourceCheckpoints,
  };
}
