// lost-update (counter workload): a write took effect whose data was not one more
// than the value in effect before it, so an increment was lost. Fencing only the
// writes does not prevent it (C1): a holder that read before its lease expired can
// still write before the next holder does.
import type { ResourceDecision, Witness } from "../store/events.ts";
import { quoteDecision, quoteWrite } from "./explain.ts";
import { eventsOf, type Model, type Write } from "./model.ts";
import { resourceView } from "./resource.ts";
import { bestBefore } from "./sweep.ts";

/** Candidates quoted in one explanation; a longer list says how many more. */
const QUOTED = 4;

export function lostUpdates(m: Model): Witness[] {
  return resourceView(m) ? fromResource(m) : fromHistory(m);
}

function notNumeric(m: Model, n: number): void {
  if (n > 0) m.unknown.push(`${n} counter writes carry data that is not a number, so lost updates around them cannot be judged`);
}

function fromResource(m: Model): Witness[] {
  const view = resourceView(m)!;
  const out: Witness[] = [];
  let odd = 0;
  for (const [key, decisions] of view.byKey) {
    let value: unknown = 0;
    let prev: ResourceDecision | null = null;
    for (const d of decisions) {
      if (d.op !== "write" || !d.accepted) continue;
      if (typeof d.data !== "number") odd++;
      else if (typeof value === "number" && d.data !== value + 1) {
        const before = prev ? `${value}, written by ${quoteDecision(prev)}` : `0 (the key had never been written)`;
        out.push({
          key,
          seqs: prev ? [prev.seq, d.seq] : [d.seq],
          events: [...(prev ? view.eventsOf(prev) : []), ...view.eventsOf(d)].sort((a, b) => a - b),
          explanation: `On key ${JSON.stringify(key)} the resource accepted ${quoteDecision(d)}, but the value in effect before it was ${before}, so it should have written ${value + 1}.`,
        });
      }
      value = d.data;
      prev = d;
    }
  }
  notNumeric(m, odd);
  return out;
}

// From the history, the value in effect before an ok write W is that of its
// immediate predecessor, which is unknown but one of a set: any write not certainly
// refused and invoked before W completed, unless some ok write certainly came
// between them (it started after the candidate ended and ended before W started);
// or 0 when no ok write certainly came before W. W lost an update only if no
// candidate is one less than its data.
function fromHistory(m: Model): Witness[] {
  const out: Witness[] = [];
  let odd = 0;
  for (const [key, writes] of m.writesByKey) {
    const oks = writes.filter((w) => w.outcome === "ok");
    const infos = writes.filter((w) => w.outcome === "info");
    const byEnd = [...oks].sort((a, b) => a.end - b.end);
    const longest = oks.reduce((t, w) => Math.max(t, w.end - w.start), 0);
    bestBefore(oks, (w) => w.end, (w) => w.start, oks, (w) => w.start, (w, latest) => {
      if (typeof w.data !== "number") {
        odd++;
        return;
      }
      const candidates: Write[] = infos.filter((c) => c.start <= w.end);
      // Ok writes that ended before the latest-starting certain predecessor began
      // are ruled out; those that started after W ended cannot precede it.
      const from = latest ? lowerBound(byEnd, latest.start) : 0;
      for (let i = from; i < byEnd.length && byEnd[i].end <= w.end + longest; i++) {
        const c = byEnd[i];
        if (c !== w && c.start <= w.end) candidates.push(c);
      }
      if (candidates.some((c) => typeof c.data !== "number" || c.data + 1 === w.data)) return;
      if (!latest && w.data === 1) return;
      const values = candidates.map((c) => `${c.data} (${quoteWrite(c)})`);
      if (!latest) values.unshift("0 (the key may never have been written before)");
      const shown = values.slice(0, QUOTED).join("; ") + (values.length > QUOTED ? `; and ${values.length - QUOTED} more` : "");
      out.push({
        key,
        events: eventsOf(w, ...candidates.slice(0, QUOTED)),
        explanation:
          `On key ${JSON.stringify(key)}, ${quoteWrite(w)} took effect, but the value in effect before it can only have been ` +
          `${values.length === 1 ? "" : "one of "}${shown}; none is ${w.data - 1}, so an update was lost.`,
      });
    });
  }
  notNumeric(m, odd);
  return out;
}

/** First index whose write ended at or after `t`. */
function lowerBound(byEnd: Write[], t: number): number {
  let lo = 0;
  let hi = byEnd.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (byEnd[mid].end < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
