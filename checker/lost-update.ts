// lost-update (counter workload): a write took effect whose data was not one more
// than the value in effect before it, so an increment was lost. Fencing only the
// writes does not prevent it (C1): a holder that read before its lease expired can
// still write before the next holder does.
import type { Witness } from "../store/events.ts";
import { quoteDecision, quoteWrite } from "./explain.ts";
import { eventsOf, type Paired } from "./paired.ts";
import { about, logThenHistory, writeSubject } from "./history-proofs.ts";
import { resourceView } from "./resource.ts";
import { bestBefore, column, sortedBy } from "./sweep.ts";
import { FAIL, INFO, OK, REFUSED, UNDECIDED } from "./table.ts";

/** Candidates quoted in one explanation; a longer list says how many more. */
const QUOTED = 4;

export function lostUpdates(m: Paired): Witness[] {
  notNumeric(m, oddWrites(m));
  return logThenHistory(m, () => fromResource(m), () => fromHistory(m));
}

/** The history's counter writes that may have taken effect (ok or unknown) and carry data that is not a number: counted once, log or not. */
function oddWrites(m: Paired): number {
  const o = m.ops;
  let odd = 0;
  for (const writes of m.writesByKey.values()) for (const w of writes.toArray()) if (o.outcome[w] !== FAIL && typeof o.data[w] !== "number") odd++;
  return odd;
}

function notNumeric(m: Paired, n: number): void {
  if (n > 0) m.unknown.push(`${n} counter writes carry data that is not a number, so lost updates around them cannot be judged`);
}

function fromResource(m: Paired): Witness[] {
  const view = resourceView(m)!;
  const ds = m.decisions!;
  const out: Witness[] = [];
  for (const [key, decisions] of view.byKey) {
    let value: unknown = 0;
    let prev = -1;
    for (let j = 0; j < decisions.length; j++) {
      const d = decisions.items[j];
      if (!ds.write[d] || ds.accepted[d] === REFUSED) continue;
      // A write of unknown outcome: the value after it is unknown, so the next one proves nothing.
      if (ds.accepted[d] === UNDECIDED) {
        value = undefined;
        prev = -1;
        continue;
      }
      const data = ds.data[d];
      if (typeof data !== "number") {
        // (counted from the history: oddWrites)
      } else if (typeof value === "number" && data !== value + 1) {
        const before = prev >= 0 ? `${value}, written by ${quoteDecision(m, prev)}` : `0 (the key had never been written)`;
        out.push(about({
          key,
          seqs: prev >= 0 ? [ds.seq[prev], ds.seq[d]] : [ds.seq[d]],
          events: [...(prev >= 0 ? view.eventsOf(prev) : []), ...view.eventsOf(d)].sort((a, b) => a - b),
          explanation: `On key ${JSON.stringify(key)} the resource accepted ${quoteDecision(m, d)}, but the value in effect before it was ${before}, so it should have written ${value + 1}.`,
        }, writeSubject(view.eventsOf(d), ds.seq[d])));
      }
      value = data;
      prev = d;
    }
  }
  return out;
}

// From the history, the value in effect before an ok write W is that of its
// immediate predecessor, which is unknown but one of a set: any write not certainly
// refused and invoked before W completed, unless some ok write certainly came
// between them (it started after the candidate ended and ended before W started);
// or 0 when no ok write certainly came before W. W lost an update only if no
// candidate is one less than its data.
function fromHistory(m: Paired): Witness[] {
  const o = m.ops;
  const out: Witness[] = [];
  for (const [key, writes] of m.writesByKey) {
    const all = writes.toArray();
    const oks = all.filter((w) => o.outcome[w] === OK);
    const infos = all.filter((w) => o.outcome[w] === INFO);
    const byEnd = sortedBy(oks, (w) => o.endOf(w));
    const longest = oks.reduce((t, w) => Math.max(t, o.endOf(w) - o.start[w]), 0);
    const { order, best } = bestBefore(column(oks, (w) => o.endOf(w)), column(oks, (w) => o.start[w]), column(oks, (w) => o.start[w]));
    for (const i of order) {
      const w = oks[i];
      const latest = best[i] < 0 ? undefined : oks[best[i]];
      const data = o.data[w];
      // (Counted from the history once: oddWrites.)
      if (typeof data !== "number") continue;
      const candidates: number[] = infos.filter((c) => o.start[c] <= o.endOf(w));
      // Ok writes that ended before the latest-starting certain predecessor began
      // are ruled out; those that started after W ended cannot precede it.
      const from = latest !== undefined ? lowerBound(m, byEnd, o.start[latest]) : 0;
      for (let j = from; j < byEnd.length && o.endOf(byEnd[j]) <= o.endOf(w) + longest; j++) {
        const c = byEnd[j];
        if (c !== w && o.start[c] <= o.endOf(w)) candidates.push(c);
      }
      if (candidates.some((c) => typeof o.data[c] !== "number" || (o.data[c] as number) + 1 === data)) continue;
      if (latest === undefined && data === 1) continue;
      const values = candidates.map((c) => `${o.data[c]} (${quoteWrite(m, c)})`);
      if (latest === undefined) values.unshift("0 (the key may never have been written before)");
      const shown = values.slice(0, QUOTED).join("; ") + (values.length > QUOTED ? `; and ${values.length - QUOTED} more` : "");
      out.push(about({
        key,
        events: eventsOf(m, w, ...candidates.slice(0, QUOTED)),
        explanation:
          `On key ${JSON.stringify(key)}, ${quoteWrite(m, w)} took effect, but the value in effect before it can only have been ` +
          `${values.length === 1 ? "" : "one of "}${shown}. It wrote ${data}, so it had read ${data - 1}, and no write that can have come just before it left ${data - 1}: an update was lost.`,
      }, writeSubject([o.invoke[w]])));
    }
  }
  return out;
}

/** First index whose write ended at or after `t`. */
function lowerBound(m: Paired, byEnd: Int32Array, t: number): number {
  let lo = 0;
  let hi = byEnd.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (m.ops.endOf(byEnd[mid]) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
