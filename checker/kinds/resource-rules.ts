// stale-write-accepted and false-rejection under the resource's rule for an rw
// lock or a semaphore (docs/history-format.md): the same questions as a mutex's
// (stale-write.ts, false-rejection.ts), asked of the rule the resource enforced,
// from its log alone. A semaphore of N accepts a write while fewer than N higher
// fences have been accepted; an rw lock accepts a write above every accepted
// fence, read or written, and a read at or above the highest written one.
import type { Witness } from "../../store/events.ts";
import { keyText, quoteDecision } from "../explain.ts";
import type { Paired } from "../paired.ts";
import { effectOrder, resourceView } from "../resource.ts";
import { ACCEPTED, REFUSED } from "../table.ts";

interface KeyFences {
  /** Accepted fences, distinct, highest first, with the decision that set each (a semaphore keeps N; an rw lock one per kind). */
  top: { fence: number; d: number }[];
  written: { fence: number; d: number } | null;
  any: { fence: number; d: number } | null;
}

/** The rule's terms a judgement reads. */
interface Terms { ds: NonNullable<Paired["decisions"]>; permits: number; semaphore: boolean }

type Judge = (m: Paired, d: number, k: KeyFences, t: Terms) => Witness | null;

/** Walks the log in order with each key's accepted fences as they stood before each decision (nothing without a log). */
function walk(m: Paired, judge: Judge): Witness[] {
  if (!m.decisions) return [];
  const ds = m.decisions;
  const permits = m.kind?.permits ?? 1;
  const terms: Terms = { ds, permits, semaphore: m.kind?.lock === "semaphore" };
  const keys = new Map<number, KeyFences>();
  const out: Witness[] = [];
  for (const d of effectOrder(m)) {
    let k = keys.get(ds.key[d]);
    if (!k) keys.set(ds.key[d], (k = { top: [], written: null, any: null }));
    const w = judge(m, d, k, terms);
    if (w) out.push(w);
    const fence = ds.fence[d];
    if (ds.accepted[d] !== ACCEPTED || Number.isNaN(fence)) continue;
    if (!k.any || fence > k.any.fence) k.any = { fence, d };
    if (ds.write[d] && (!k.written || fence > k.written.fence)) k.written = { fence, d };
    if (ds.write[d] && !k.top.some((t) => t.fence === fence)) {
      k.top.push({ fence, d });
      k.top.sort((a, b) => b.fence - a.fence);
      k.top.length = Math.min(k.top.length, permits);
    }
  }
  return out;
}

const higherThan = (k: KeyFences, fence: number): { fence: number; d: number }[] => k.top.filter((t) => t.fence > fence);

function witness(m: Paired, d: number, before: number[], why: string): Witness {
  const ds = m.decisions!;
  const view = resourceView(m)!;
  const all = [...before, d].sort((a, b) => a - b);
  return { key: m.keys.names[ds.key[d]], seqs: all.map((x) => ds.seq[x]), events: all.flatMap((x) => view.eventsOf(x)).sort((a, b) => a - b), explanation: why };
}

export const staleUnderRule = (m: Paired): Witness[] => walk(m, stale);
export const falseRejectionsUnderRule = (m: Paired): Witness[] => walk(m, refusedFalsely);

const stale: Judge = (m, d, k, { ds, permits, semaphore }) => {
  const fence = ds.fence[d];
  if (!ds.write[d] || ds.accepted[d] !== ACCEPTED || Number.isNaN(fence)) return null;
  if (semaphore) {
    const higher = higherThan(k, fence);
    if (higher.length < permits) return null;
    return witness(m, d, higher.map((t) => t.d), `On key ${keyText(m, ds.key[d])} the resource accepted ${quoteDecision(m, d)} after it had accepted ${higher.length} writes with higher fences (${higher.map((t) => quoteDecision(m, t.d)).join("; ")}), and the semaphore has ${permits} permit${permits === 1 ? "" : "s"}: a write of a holder whose permit had passed to others took effect.`);
  }
  if (!k.any || !(k.any.fence > fence)) return null;
  return witness(m, d, [k.any.d], `On key ${keyText(m, ds.key[d])} the resource accepted ${quoteDecision(m, d)} after it had already accepted ${quoteDecision(m, k.any.d)}: under a read-write lock a write must be above every fence read or written, and fence ${fence} was below ${k.any.fence}.`);
};

const refusedFalsely: Judge = (m, d, k, { ds, permits, semaphore }) => {
  const fence = ds.fence[d];
  if (ds.accepted[d] !== REFUSED || Number.isNaN(fence) || (semaphore && !ds.write[d])) return null;
  // A write of unknown outcome at or above this fence may have taken effect first.
  if (resourceView(m)!.undecidedTop[ds.key[d]] >= fence) return null;
  if (semaphore) {
    const higher = higherThan(k, fence);
    if (higher.length >= permits) return null;
    return witness(m, d, higher.map((t) => t.d), `On key ${keyText(m, ds.key[d])} the resource refused ${quoteDecision(m, d)}, yet only ${higher.length} higher fence${higher.length === 1 ? " had" : "s had"} been accepted and the semaphore has ${permits} permits.`);
  }
  const bar = ds.write[d] ? k.any : k.written;
  if (bar && (ds.write[d] ? bar.fence >= fence : bar.fence > fence)) return null;
  return witness(m, d, bar ? [bar.d] : [], `On key ${keyText(m, ds.key[d])} the resource refused ${quoteDecision(m, d)}, yet ${bar ? `the highest fence it had accepted ${ds.write[d] ? "for a read or a write" : "for a write"} was ${bar.fence}, in ${quoteDecision(m, bar.d)}` : `it had accepted no fence ${ds.write[d] ? "" : "for a write "}on the key`}: fence ${fence} was the newest.`);
};
