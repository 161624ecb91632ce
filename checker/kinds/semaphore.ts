// semaphore-overflow: more holds of a key certainly valid at one moment than the
// semaphore has permits. The witness names N+1 of them, the last the hold whose
// grant made one too many.
import type { Witness } from "../../store/events.ts";
import { ms } from "../explain.ts";
import { eventsOf, type Paired } from "../paired.ts";
import { validText } from "../mutex.ts";
import { spanAt } from "../spans.ts";
import { sweepHolds } from "./overlaps.ts";

export function semaphoreOverflows(m: Paired): { witnesses: Witness[]; leaseOverlaps: number } {
  const permits = m.kind?.permits ?? 1;
  const witnesses: Witness[] = [];
  let leaseOverlaps = 0;
  // One witness per grant (an acquire's ok, or a late renew's) that made one too many.
  sweepHolds(m, ({ hold: h, at, grant, valid, acting }) => {
    if (valid.length + 1 > permits) witnesses.push(witness(m, [...valid.slice(valid.length - permits), h], permits, at));
    else if (grant && valid.length + acting.length + 1 > permits) leaseOverlaps++;
  });
  return { witnesses, leaseOverlaps };
}

function witness(m: Paired, hs: number[], permits: number, at: number): Witness {
  const spans = hs.map((h) => spanAt(m, h, at));
  const last = spans[spans.length - 1];
  const until = Math.min(...spans.map((s) => s.end));
  const key = m.keys.names[m.holds.key[last.hold]];
  return {
    key,
    events: eventsOf(m, ...spans.flatMap((s) => [m.holds.acquire[s.hold], s.from, s.bound])),
    explanation:
      `On key ${JSON.stringify(key)} ${hs.length} holds were certainly valid at once from ${ms(at)} to ${ms(until)}, ` +
      `and the semaphore has ${permits} permit${permits === 1 ? "" : "s"}: ${spans.map((s) => validText(m, s)).join("; ")}.`,
  };
}
