// false-rejection: a write was refused although its fence was higher than every
// fence accepted before it on that key. Fencing that refuses the newest holder
// costs liveness, and shows the resource's idea of the fence is wrong.
//
// A read that carried a fence (fenced reads, REFERENCES.md C1) advances the
// resource's fence like a write, so its fence counts as accepted too: a write
// refused below a fenced read is a correct refusal, not a false one.
import type { ResourceDecision, Witness } from "../store/events.ts";
import { fenceText, ms, quoteDecision, quoteOp, quoteWrite } from "./explain.ts";
import { eventsOf, type Model, type Op, type Write } from "./model.ts";
import { resourceView } from "./resource.ts";
import { bestBefore, groupBy } from "./sweep.ts";

export function falseRejections(m: Model): Witness[] {
  return resourceView(m) ? fromResource(m) : fromHistory(m);
}

function fromResource(m: Model): Witness[] {
  const view = resourceView(m)!;
  const out: Witness[] = [];
  for (const [key, decisions] of view.byKey) {
    let top: ResourceDecision | null = null;
    for (const d of decisions) {
      if (d.op === "write" && !d.accepted && d.fence !== null && (!top || d.fence > top.fence!)) {
        const before = top
          ? `the highest fence it had accepted on the key was ${top.fence}, in ${quoteDecision(top)}`
          : `it had accepted no fence on the key before`;
        out.push({
          key,
          seqs: top ? [top.seq, d.seq] : [d.seq],
          events: [...(top ? view.eventsOf(top) : []), ...view.eventsOf(d)].sort((a, b) => a - b),
          explanation: `On key ${JSON.stringify(key)} the resource refused ${quoteDecision(d)}, yet ${before}: fence ${d.fence} was the newest.`,
        });
      }
      if (d.accepted && d.fence !== null && (!top || d.fence > top.fence!)) top = d;
    }
  }
  return out;
}

// From the history: the resource refused a write somewhere between its invoke and
// its completion. Any write or fenced read that was not certainly refused and was
// invoked by then may have been accepted before it, so the refused fence must beat
// all of those to prove the refusal false.
function fromHistory(m: Model): Witness[] {
  const out: Witness[] = [];
  const reads = groupBy(
    m.ops.filter((op) => op.f === "read" && op.key !== undefined && op.outcome !== "fail" && op.fence !== null),
    (op) => op.key!,
  );
  for (const [key, writes] of m.writesByKey) {
    const refused: Op[] = [];
    const maybeAccepted: Op[] = [];
    for (const w of writes) {
      if (w.fence === null) continue;
      if (w.outcome !== "fail") maybeAccepted.push(w);
      else if (w.done?.error === "stale-fence") refused.push(w);
    }
    if (refused.length === 0) continue;
    maybeAccepted.push(...(reads.get(key) ?? []));
    const fence = (op: Op): number => op.fence!;
    // Times are integers: "invoked no later than the refusal completed" is start < end + 0.5.
    bestBefore(maybeAccepted, (a) => a.start, fence, refused, (r) => r.end + 0.5, (r, top) => {
      if (top && fence(top) >= fence(r)) return;
      const before = top
        ? `the highest fence of any write or fenced read that could have been accepted before it was ${top.fence}, in ${quote(top)}`
        : `no write or fenced read on the key that was not refused was invoked before its completion at ${ms(r.end)}`;
      out.push({
        key,
        events: eventsOf(top, r),
        explanation: `On key ${JSON.stringify(key)} ${quote(r)} was refused as stale, yet ${before}: ${fenceText(r.fence)} was the newest.`,
      });
    });
  }
  return out;
}

const quote = (op: Op): string => (op.f === "write" ? quoteWrite(op as Write) : quoteOp(op, fenceText(op.fence)));
