// false-rejection: a write was refused although its fence was higher than every
// fence accepted before it on that key. Fencing that refuses the newest holder
// costs liveness, and shows the resource's idea of the fence is wrong.
//
// A read that carried a fence (fenced reads, REFERENCES.md C1) advances the
// resource's fence like a write, so its fence counts as accepted too: a write
// refused below a fenced read is a correct refusal, not a false one.
import type { Witness } from "../store/events.ts";
import { fenceText, ms, quoteDecision, quoteOp, quoteWrite } from "./explain.ts";
import { eventsOf, READ, WRITE, type Model } from "./model.ts";
import { resourceView } from "./resource.ts";
import { bestBefore, column } from "./sweep.ts";
import { FAIL, orNull } from "./table.ts";

export function falseRejections(m: Model): Witness[] {
  return resourceView(m) ? fromResource(m) : fromHistory(m);
}

function fromResource(m: Model): Witness[] {
  const view = resourceView(m)!;
  const ds = m.decisions!;
  const out: Witness[] = [];
  for (const [key, decisions] of view.byKey) {
    let top = -1;
    for (let j = 0; j < decisions.length; j++) {
      const d = decisions.items[j];
      const fence = ds.fence[d];
      const fenced = !Number.isNaN(fence);
      if (ds.write[d] && !ds.accepted[d] && fenced && (top < 0 || fence > ds.fence[top])) {
        const before = top >= 0
          ? `the highest fence it had accepted on the key was ${ds.fence[top]}, in ${quoteDecision(m, top)}`
          : `it had accepted no fence on the key before`;
        out.push({
          key,
          seqs: top >= 0 ? [ds.seq[top], ds.seq[d]] : [ds.seq[d]],
          events: [...(top >= 0 ? view.eventsOf(top) : []), ...view.eventsOf(d)].sort((a, b) => a - b),
          explanation: `On key ${JSON.stringify(key)} the resource refused ${quoteDecision(m, d)}, yet ${before}: fence ${fence} was the newest.`,
        });
      }
      if (ds.accepted[d] && fenced && (top < 0 || fence > ds.fence[top])) top = d;
    }
  }
  return out;
}

// From the history: the resource refused a write somewhere between its invoke and
// its completion. Any write or fenced read that was not certainly refused and was
// invoked by then may have been accepted before it, so the refused fence must beat
// all of those to prove the refusal false.
function fromHistory(m: Model): Witness[] {
  const o = m.ops;
  const out: Witness[] = [];
  const staleFence = m.errors.names.indexOf("stale-fence");
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
    // Times are integers: "invoked no later than the refusal completed" is start < end + 0.5.
    const { order, best } = bestBefore(column(maybeAccepted, (a) => o.start[a]), column(maybeAccepted, fence), column(refused, (r) => o.end[r] + 0.5));
    for (const i of order) {
      const r = refused[i];
      const top = best[i] < 0 ? undefined : maybeAccepted[best[i]];
      if (top !== undefined && fence(top) >= fence(r)) continue;
      const before = top !== undefined
        ? `the highest fence of any write or fenced read that could have been accepted before it was ${fence(top)}, in ${quote(m, top)}`
        : `no write or fenced read on the key that was not refused was invoked before its completion at ${ms(o.end[r])}`;
      out.push({
        key,
        events: top !== undefined ? eventsOf(m, top, r) : eventsOf(m, r),
        explanation: `On key ${JSON.stringify(key)} ${quote(m, r)} was refused as stale, yet ${before}: ${fenceText(orNull(fence(r)))} was the newest.`,
      });
    }
  }
  return out;
}

const quote = (m: Model, op: number): string =>
  m.ops.f[op] === WRITE ? quoteWrite(m, op) : quoteOp(m, op, fenceText(orNull(m.ops.fence[op])));
