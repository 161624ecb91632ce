// mutex-violation: two holds of one key both certainly valid at one moment.
//
// A hold's spans of certain validity are spans.ts's: from its acquire's ok, and
// each late renew's, to the invoke plus the TTL of the lease that bounds it, cut
// at its release. Only a broken lock service (K3, K4, T1) or clock lets two such
// spans meet.
//
// Holds whose holders went on acting (writing, renewing, releasing) past that point
// overlap without any fault of the lock service: the lease expired, which is what a
// lease does (K1). Those are counted as lease overlaps, not reported.
import type { Witness } from "../store/events.ts";
import { ms, quoteAcquire, quoteOp } from "./explain.ts";
import { eventsOf, RENEW, type Paired } from "./paired.ts";
import { holdSpans, spanAt, sweepGrants, type Span } from "./spans.ts";
import { INFO } from "./table.ts";

export interface HoldCheck {
  violations: Witness[];
  leaseOverlaps: number;
}

function why(m: Paired, s: Span): string {
  const o = m.ops;
  const b = s.bound;
  const f = m.fs.names[o.f[b]];
  const at = `${f} #${o.invoke[b]} invoked at ${ms(o.start[b])}`;
  if (f === "release") return at;
  if (s.boundTtl === null || Number.isNaN(s.boundTtl)) return `${at}, no TTL known`;
  return `${o.outcome[b] === INFO ? `${at} (outcome unknown)` : at} + TTL ${(s.boundTtl * 1e6) / 1e6} ms`;
}

export function checkHolds(m: Paired): HoldCheck {
  // An rw lock's and a semaphore's holds may overlap by design: checker/kinds
  // judges them, and a witness per overlap made here would only be thrown away
  // (a large rw run's readers overlap hundreds of thousands of times).
  if (m.header.lock === "rw" || m.header.lock === "semaphore") return { violations: [], leaseOverlaps: 0 };
  const violations: Witness[] = [];
  let leaseOverlaps = 0;
  const spans = holdSpans(m);
  sweepGrants(m, spans, ({ hold: h, at, grant, firstMet, acting }) => {
    for (const a of firstMet) violations.push(witness(m, m.keys.names[m.holds.key[h]], spanAt(m, a, at), spanAt(m, h, at), at));
    if (grant && spans.claimed[h] > at) leaseOverlaps += acting.length;
  });
  return { violations, leaseOverlaps };
}

/**
 * A hold as a witness quotes it: its acquire, the late renew whose ok started the
 * span if one did, and until when it was certainly valid, and why.
 */
export const validText = (m: Paired, s: Span): string => {
  const again = m.ops.f[s.from] === RENEW ? `, certainly valid again from ${quoteOp(m, s.from, "a late renew")}` : "";
  return `${quoteAcquire(m, s.hold)}${again}, certainly valid until ${ms(s.end)} (${why(m, s)})`;
};

function witness(m: Paired, key: string, a: Span, b: Span, from: number): Witness {
  const until = Math.min(a.end, b.end);
  const valid = (s: Span): string => validText(m, s);
  return {
    key,
    events: eventsOf(m, m.holds.acquire[a.hold], a.from, a.bound, m.holds.acquire[b.hold], b.from, b.bound),
    explanation:
      `On key ${JSON.stringify(key)} two holds were certainly valid at once from ${ms(from)} to ${ms(until)}: ` +
      `${valid(a)}; and ${valid(b)}. A correct lock service cannot grant a hold while another's lease is still running.`,
  };
}
