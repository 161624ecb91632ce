// rw-violation: a write hold certainly valid while another hold of its key, read
// or write, was certainly valid too. A read-write lock lets readers share; a
// writer must hold alone. Spans as mutex-violation's (mutex.ts): a hold is
// certainly valid from its acquire's ok until its release is invoked or its last
// lease (asked no earlier than its invoke) ran out.
import type { Witness } from "../../store/events.ts";
import { MODE_READ } from "../../store/event-fields.ts";
import { ms } from "../explain.ts";
import { eventsOf, type Paired } from "../paired.ts";
import { spanOf, validText } from "../mutex.ts";
import { sweepHolds } from "./overlaps.ts";

/** A hold's mode: read only when its acquire asked for it; any other acquire is exclusive. */
export const readsOnly = (m: Paired, h: number): boolean => m.kind?.mode.get(m.holds.acquire[h]) === MODE_READ;

export function rwViolations(m: Paired): { witnesses: Witness[]; leaseOverlaps: number } {
  const witnesses: Witness[] = [];
  let leaseOverlaps = 0;
  sweepHolds(m, ({ hold: h, valid, acting }) => {
    const conflicts = (a: number): boolean => !readsOnly(m, a) || !readsOnly(m, h);
    for (const a of valid) if (conflicts(a)) witnesses.push(witness(m, a, h));
    leaseOverlaps += acting.filter(conflicts).length;
  });
  return { witnesses, leaseOverlaps };
}

function witness(m: Paired, a: number, b: number): Witness {
  const sa = spanOf(m, a), sb = spanOf(m, b);
  const key = m.keys.names[m.holds.key[b]];
  const mode = (h: number): string => (readsOnly(m, h) ? "a read hold" : "a write hold");
  return {
    key,
    events: eventsOf(m, m.holds.acquire[a], sa.bound, m.holds.acquire[b], sb.bound),
    explanation:
      `On key ${JSON.stringify(key)} ${mode(a)} and ${mode(b)} were certainly valid at once from ${ms(sb.start)} to ${ms(Math.min(sa.end, sb.end))}: ` +
      `${validText(m, sa)}; and ${validText(m, sb)}. A read-write lock lets readers share, but a writer must hold alone.`,
  };
}
