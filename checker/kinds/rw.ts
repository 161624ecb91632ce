// rw-violation: a write hold certainly valid while another hold of its key, read
// or write, was certainly valid too. A read-write lock lets readers share; a
// writer must hold alone. Spans as mutex-violation's (mutex.ts): a hold is
// certainly valid over the spans its acquire and ok renews give it, cut at its
// release (spans.ts). One witness per pair of holds.
import type { Witness } from "../../store/events.ts";
import { MODE_READ } from "../../store/event-fields.ts";
import { ms } from "../explain.ts";
import { eventsOf, type Paired } from "../paired.ts";
import { validText } from "../mutex.ts";
import { spanAt } from "../spans.ts";
import { sweepHolds } from "./overlaps.ts";

/** A hold's mode: read only when its acquire asked for it; any other acquire is exclusive. */
export const readsOnly = (m: Paired, h: number): boolean => m.kind?.mode.get(m.holds.acquire[h]) === MODE_READ;

export function rwViolations(m: Paired): { witnesses: Witness[]; leaseOverlaps: number } {
  const witnesses: Witness[] = [];
  let leaseOverlaps = 0;
  sweepHolds(m, ({ hold: h, at, firstMet, acting }) => {
    const conflicts = (a: number): boolean => !readsOnly(m, a) || !readsOnly(m, h);
    for (const a of firstMet) if (conflicts(a)) witnesses.push(witness(m, a, h, at));
    leaseOverlaps += acting.filter(conflicts).length;
  });
  return { witnesses, leaseOverlaps };
}

function witness(m: Paired, a: number, b: number, at: number): Witness {
  const sa = spanAt(m, a, at), sb = spanAt(m, b, at);
  const key = m.keys.names[m.holds.key[b]];
  const mode = (h: number): string => (readsOnly(m, h) ? "a read hold" : "a write hold");
  return {
    key,
    events: eventsOf(m, m.holds.acquire[a], sa.from, sa.bound, m.holds.acquire[b], sb.from, sb.bound),
    explanation:
      `On key ${JSON.stringify(key)} ${mode(a)} and ${mode(b)} were certainly valid at once from ${ms(at)} to ${ms(Math.min(sa.end, sb.end))}: ` +
      `${validText(m, sa)}; and ${validText(m, sb)}. A read-write lock lets readers share, but a writer must hold alone.`,
  };
}
