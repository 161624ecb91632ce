// Fenced reads (--fence-reads, scenario C1 of docs/experiments.md): a read that carries its hold's
// fence, which the resource refuses when a higher fence has been accepted on the
// key and otherwise advances the key's fence to (resource/fences.ts).
// docs/history-format.md has no anomaly type for a read: a read changes nothing,
// and what a holder does with a stale value is a write, which stale-write-accepted,
// false-rejection and lost-update judge. So what reads did is counted in stats,
// like the refused writes, with witnesses of where the resource broke its rule for
// reads:
//
//   stale_reads_refused  reads refused for a stale fence (as stale_writes_refused)
//   fenced_reads         reads that carried a fence: accepted, stale_accepted (a
//                        higher fence had been accepted before; with fencing off,
//                        what fencing would have refused), falsely_refused (no
//                        fence accepted before was higher), and witnesses of both
import type { Witness } from "../store/events.ts";
import { fenceText, keyText, ms, quoteDecision, quoteOp } from "./explain.ts";
import { READ, WRITE, type Paired } from "./paired.ts";
import { judgeDecisions, resourceView, topOf } from "./resource.ts";
import { bestBefore, column } from "./sweep.ts";
import { ACCEPTED, FAIL, OK, orNull, UNDECIDED } from "./table.ts";

/** Witnesses kept in stats; the counts are whole. */
const WITNESSES = 3;

export interface FencedReadStats {
  accepted: number;
  stale_accepted: number;
  falsely_refused: number;
  witnesses: Witness[];
}

export interface ReadStats {
  stale_reads_refused: number;
  /** Absent when no read carried a fence. */
  fenced_reads?: FencedReadStats;
}

export function readStats(m: Paired): { stats: ReadStats; warnings: string[] } {
  const counted = resourceView(m) ? fromResource(m) : fromHistory(m);
  const { refused, fenced, accepted, stale, falselyRefused, fencing } = counted;
  const stats: ReadStats = { stale_reads_refused: refused };
  if (fenced > 0) {
    stats.fenced_reads = {
      accepted, stale_accepted: stale.length, falsely_refused: falselyRefused.length,
      witnesses: [...stale, ...falselyRefused].slice(0, WITNESSES),
    };
  }
  const warnings: string[] = [];
  if (fencing && stale.length > 0) warnings.push(`the resource accepted ${stale.length} reads whose fence was stale, against its own rule (stats.fenced_reads)`);
  if (falselyRefused.length > 0) warnings.push(`the resource refused ${falselyRefused.length} reads whose fence no accepted fence beat (stats.fenced_reads)`);
  return { stats, warnings };
}

interface Counted {
  refused: number;
  /** Reads that carried a fence, refused ones included, and those accepted. */
  fenced: number;
  accepted: number;
  stale: Witness[];
  falselyRefused: Witness[];
  /** Whether the resource enforced fences where a stale read got through. */
  fencing: boolean;
}

// A read is judged by the resource's rule for reads: accepted if and only if its
// fence is at least every fence accepted before it, of writes and reads alike;
// an rw lock's, at least every written one.
function fromResource(m: Paired): Counted {
  const ds = m.decisions!;
  const rw = m.kind?.lock === "rw";
  const view = resourceView(m)!;
  const c: Counted = { refused: 0, fenced: 0, accepted: 0, stale: [], falselyRefused: [], fencing: false };
  judgeDecisions(m, (d) => {
    if (ds.write[d] || ds.accepted[d] === UNDECIDED) return null;
    const accepted = ds.accepted[d] === ACCEPTED;
    if (!accepted) c.refused++;
    const fence = ds.fence[d];
    if (Number.isNaN(fence)) return null;
    c.fenced++;
    if (accepted) c.accepted++;
    // An rw lock's read is judged against the writes alone: readers share.
    const top = rw ? view.before.write[d] : topOf(m, view.before, d);
    const stale = top >= 0 && ds.fence[top] > fence;
    if (accepted === !stale) return null;
    const key = keyText(m, ds.key[d]);
    const witness = (explanation: string, tops: number[]): Witness => ({
      key: m.keys.names[ds.key[d]],
      seqs: [...tops.map((t) => ds.seq[t]), ds.seq[d]],
      events: [...tops.flatMap((t) => view.eventsOf(t)), ...view.eventsOf(d)].sort((a, b) => a - b),
      explanation,
    });
    if (accepted) {
      if (ds.fencing[d]) c.fencing = true;
      c.stale.push(witness(
        `On key ${key} the resource answered ${quoteDecision(m, d)} after it had accepted ${quoteDecision(m, top)}: ` +
        `a read with fence ${fence} after fence ${ds.fence[top]}` +
        (ds.fencing[d] ? `, which a resource enforcing fenced reads must refuse.` : `; fencing was off, so nothing refused the older holder.`),
        [top],
      ));
    } else {
      c.falselyRefused.push(witness(
        top >= 0
          ? `On key ${key} the resource refused ${quoteDecision(m, d)}, yet the highest fence it had accepted was ${ds.fence[top]}, in ${quoteDecision(m, top)}: a read needs only to meet it.`
          : `On key ${key} the resource refused ${quoteDecision(m, d)}, yet it had accepted no fence on the key before.`,
        top >= 0 ? [top] : [],
      ));
    }
    return null;
  });
  return c;
}

// From the history, as the write analyses do: a read accepted after an ok write or
// read with a higher fence completed was certainly stale; a read refused although
// nothing not refused and invoked before the refusal completed had a higher fence
// was certainly refused falsely.
function fromHistory(m: Paired): Counted {
  const o = m.ops;
  const staleFence = m.errors.names.indexOf("stale-fence");
  const c: Counted = { refused: 0, fenced: 0, accepted: 0, stale: [], falselyRefused: [], fencing: m.header.fencing === true };
  const rw = m.kind?.lock === "rw";
  const byKey = new Map<number, { ok: number[]; maybe: number[]; reads: number[]; refused: number[] }>();
  const of = (key: number) => {
    let k = byKey.get(key);
    if (!k) byKey.set(key, (k = { ok: [], maybe: [], reads: [], refused: [] }));
    return k;
  };
  for (let i = 0; i < o.length; i++) {
    const f = o.f[i];
    if ((f !== READ && f !== WRITE) || o.key[i] < 0) continue;
    const read = f === READ;
    if (read && o.outcome[i] === FAIL && staleFence >= 0 && o.error[i] === staleFence) c.refused++;
    if (Number.isNaN(o.fence[i])) continue;
    if (read) c.fenced++;
    if (read && o.outcome[i] === OK) c.accepted++;
    const k = of(o.key[i]);
    // An rw lock's reads are judged against its writes alone: readers share.
    const bar = !(read && rw);
    if (o.outcome[i] === OK && bar) k.ok.push(i);
    if (o.outcome[i] !== FAIL && bar) k.maybe.push(i);
    else if (read && o.error[i] === staleFence) k.refused.push(i);
    if (read && o.outcome[i] === OK) k.reads.push(i);
  }
  const fence = (i: number): number => o.fence[i];
  for (const [key, k] of byKey) {
    const accepted = bestBefore(column(k.ok, (i) => o.endOf(i)), column(k.ok, fence), column(k.reads, (i) => o.start[i]));
    for (const j of accepted.order) {
      const top = accepted.best[j] < 0 ? -1 : k.ok[accepted.best[j]];
      const r = k.reads[j];
      if (top < 0 || fence(top) <= fence(r)) continue;
      c.stale.push({
        key: m.keys.names[key],
        events: [o.invoke[top], o.done[top], o.invoke[r], o.done[r]].sort((a, b) => a - b),
        explanation:
          `On key ${keyText(m, key)}, ${quote(m, top)}; then ${quote(m, r)}. The first completed before the second was invoked, ` +
          `so the resource answered a read with ${fenceText(fence(r))} after it had accepted fence ${fence(top)}.`,
      });
    }
    // Times are integers: "invoked no later than the refusal completed" is start < end + 0.5.
    const refused = bestBefore(column(k.maybe, (i) => o.start[i]), column(k.maybe, fence), column(k.refused, (i) => o.endOf(i) + 0.5));
    for (const j of refused.order) {
      const top = refused.best[j] < 0 ? -1 : k.maybe[refused.best[j]];
      const r = k.refused[j];
      if (top >= 0 && fence(top) > fence(r)) continue;
      c.falselyRefused.push({
        key: m.keys.names[key],
        events: [...(top >= 0 ? [o.invoke[top], o.done[top]] : []), o.invoke[r], o.done[r]].filter((e) => e >= 0).sort((a, b) => a - b),
        explanation:
          `On key ${keyText(m, key)} ${quote(m, r)} was refused as stale, yet ` +
          (top >= 0 ? `the highest fence that could have been accepted before it was ${fence(top)}, in ${quote(m, top)}` : `nothing with a fence on the key that was not refused was invoked before its completion at ${ms(o.endOf(r))}`) +
          `: a read needs only to meet the highest fence.`,
      });
    }
  }
  return c;
}

const quote = (m: Paired, op: number): string => quoteOp(m, op, fenceText(orNull(m.ops.fence[op])));
