// false-rejection: a write was refused although its fence was higher than every
// fence accepted before it on that key. Fencing that refuses the newest holder
// costs liveness, and shows the resource's idea of the fence is wrong.
//
// A read that carried a fence (fenced reads, scenario C1 of docs/experiments.md) advances the
// resource's fence too, but not as a write does (resource/fences.ts): the hold
// that read with fence f must still be able to write with f. So a write is
// rightly refused only below a fenced read's fence, and at or below a write's;
// refused with a fence equal to the highest read's, and above every write's, it
// was refused falsely.
import type { Witness } from "../store/events.ts";
import { fenceText, keyText, ms, quoteDecision, quoteOp, quoteWrite } from "./explain.ts";
import { eventsOf, READ, WRITE, type Paired } from "./paired.ts";
import { about, logThenHistory, writeSubject } from "./history-proofs.ts";
import { judgeDecisions, resourceView } from "./resource.ts";
import { bestBefore, column } from "./sweep.ts";
import { FAIL, orNull, REFUSED } from "./table.ts";

/**
 * `historyComplete: false` (run.json `history_complete`, a trace's run): the
 * history may lack writes (sampled-out holds, dropped spans), so the proof from
 * the history alone, which rests on no write with a higher fence being there,
 * is not made; the log's still is.
 */
export function falseRejections(m: Paired, historyComplete = true): Witness[] {
  return logThenHistory(m, () => judgeDecisions(m, (d, w, r) => refusedFalsely(m, d, w, r)), () => (historyComplete ? fromHistory(m) : []));
}

/** A refused write, given the accepted write (`w`) and fenced read (`r`) with the highest fences before it. */
function refusedFalsely(m: Paired, d: number, w: number, r: number): Witness | null {
  const ds = m.decisions!;
  const fence = ds.fence[d];
  if (!ds.write[d] || ds.accepted[d] !== REFUSED || Number.isNaN(fence)) return null;
  // A reentrant lock's resource accepts an equal fence (the same outermost hold at another depth): only a higher one excuses.
  const equalExcuses = m.kind?.lock !== "reentrant";
  if ((w >= 0 && (ds.fence[w] > fence || (equalExcuses && ds.fence[w] === fence))) || (r >= 0 && ds.fence[r] > fence)) return null;
  const view = resourceView(m)!;
  // A write of unknown outcome at or above this fence may have taken effect first.
  if (view.undecidedTop[ds.key[d]] >= fence) return null;
  const tops = [w, r].filter((t) => t >= 0).sort((a, b) => a - b);
  const before = [
    w >= 0 ? `the highest fence of a write it had accepted on the key was ${ds.fence[w]}, in ${quoteDecision(m, w)}` : `it had accepted no fenced write on the key`,
    ...(r >= 0 ? [`the highest fence a read had carried was ${ds.fence[r]}, in ${quoteDecision(m, r)}, which a write may equal`] : []),
  ].join(", and ");
  return about({
    key: m.keys.names[ds.key[d]],
    seqs: [...tops.map((t) => ds.seq[t]), ds.seq[d]],
    events: [...tops.flatMap((t) => view.eventsOf(t)), ...view.eventsOf(d)].sort((a, b) => a - b),
    explanation: `On key ${keyText(m, ds.key[d])} the resource refused ${quoteDecision(m, d)}, yet ${before}: fence ${fence} was the newest.`,
  }, writeSubject(view.eventsOf(d), ds.seq[d]));
}

// From the history: the resource refused a write somewhere between its invoke and
// its completion. Any write or fenced read that was not certainly refused and was
// invoked by then may have been accepted before it, so the refused fence must beat
// all of those to prove the refusal false.
function fromHistory(m: Paired): Witness[] {
  const o = m.ops;
  const out: Witness[] = [];
  const staleFence = m.errors.names.indexOf("stale-fence");
  const reentrant = m.kind?.lock === "reentrant";
  const reads = new Map<number, number[]>();
  for (let i = 0; i < o.length; i++) {
    if (o.f[i] !== READ || o.key[i] < 0 || o.outcome[i] === FAIL || Number.isNaN(o.fence[i])) continue;
    const list = reads.get(o.key[i]);
    if (list) list.push(i);
    else reads.set(o.key[i], [i]);
  }
  for (const [key, writes] of m.writesByKey) {
    const refused: number[] = [];
    const maybeAccepted: number[] = [];
    for (let j = 0; j < writes.length; j++) {
      const w = writes.items[j];
      if (Number.isNaN(o.fence[w])) continue;
      if (o.outcome[w] !== FAIL) maybeAccepted.push(w);
      else if (staleFence >= 0 && o.error[w] === staleFence) refused.push(w);
    }
    if (refused.length === 0) continue;
    maybeAccepted.push(...(reads.get(o.key[writes.items[0]]) ?? []));
    const fence = (op: number): number => o.fence[op];
    // Fences are integers: a read's scored half a step below its fence excuses a
    // refusal (score >= the refused fence) only with a higher fence, a write's
    // with an equal one too, as the resource's rule has it.
    // (Under a reentrant lock an equal write fence is accepted too, so a write's is scored as a read's.)
    const score = (op: number): number => (o.f[op] === READ || reentrant ? o.fence[op] - 0.5 : o.fence[op]);
    // Times are integers: "invoked no later than the refusal completed" is start < end + 0.5.
    const { order, best } = bestBefore(column(maybeAccepted, (a) => o.start[a]), column(maybeAccepted, score), column(refused, (r) => o.endOf(r) + 0.5));
    for (const i of order) {
      const r = refused[i];
      const top = best[i] < 0 ? undefined : maybeAccepted[best[i]];
      if (top !== undefined && score(top) >= fence(r)) continue;
      const before = top !== undefined
        ? `the highest fence of any write or fenced read that could have been accepted before it was ${fence(top)}, in ${quote(m, top)}` +
          (o.f[top] === READ && fence(top) === fence(r) ? `, which a write may equal` : ``)
        : `no write or fenced read on the key that was not refused was invoked before its completion at ${ms(o.endOf(r))}`;
      out.push(about({
        key,
        events: top !== undefined ? eventsOf(m, top, r) : eventsOf(m, r),
        explanation: `On key ${JSON.stringify(key)} ${quote(m, r)} was refused as stale, yet ${before}: ${fenceText(orNull(fence(r)))} was the newest.`,
      }, writeSubject([o.invoke[r]])));
    }
  }
  return out;
}

const quote = (m: Paired, op: number): string =>
  m.ops.f[op] === WRITE ? quoteWrite(m, op) : quoteOp(m, op, fenceText(orNull(m.ops.fence[op])));
