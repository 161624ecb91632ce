// mutex-violation: two holds of one key both certainly valid at one moment.
//
// A hold is certainly valid from its acquire's ok until the earliest of its first
// release invoke and its last successful acquire or renew invoke plus the TTL: the
// lock service cannot have started the lease before the request left the client.
// Only a broken lock service (K3, K4, T1) or clock lets two such spans meet.
//
// Holds whose holders went on acting (writing, renewing, releasing) past that point
// overlap without any fault of the lock service: the lease expired, which is what a
// lease does (K1). Those are counted as lease overlaps, not reported.
import type { Witness } from "../store/events.ts";
import { ms, quoteAcquire } from "./explain.ts";
import { eventsOf, ttlNs, type Hold, type Model, type Op } from "./model.ts";

interface Span {
  hold: Hold;
  start: number;
  /** End of certain validity (may be <= start: never certainly valid). */
  end: number;
  /** The operation whose invoke (plus its TTL, unless a release) bounds `end`. */
  bound: Op;
  boundTtl: number | null;
  /** Until when its holder acted as the holder: at least `end`. */
  claimedEnd: number;
}

export interface HoldCheck {
  violations: Witness[];
  leaseOverlaps: number;
}

function spanOf(h: Hold): Span {
  const start = h.acquire.end;
  // The lease of the latest acquire or renew that certainly happened.
  let bound: Op = h.acquire;
  let boundTtl = h.ttlNs;
  for (const r of h.renews) {
    if (r.outcome === "ok" && r.start >= bound.start) {
      bound = r;
      boundTtl = ttlNs(r.invoke.value, r.done?.value);
    }
  }
  const leaseFrom = bound.start;
  let end = leaseFrom + (boundTtl ?? 0);
  // A later renew with an unknown outcome may have set a shorter lease.
  for (const r of h.renews) {
    const t = ttlNs(r.invoke.value);
    if (r.outcome === "info" && r.start >= leaseFrom && t !== null && r.start + t < end) {
      end = r.start + t;
      bound = r;
      boundTtl = t;
    }
  }
  for (const r of h.releases) {
    if (r.start < end) {
      end = r.start;
      bound = r;
      boundTtl = null;
    }
  }
  let acted = start;
  for (const op of h.renews) if (op.start > acted) acted = op.start;
  for (const op of h.releases) if (op.start > acted) acted = op.start;
  for (const op of h.writes) if (op.start > acted) acted = op.start;
  return { hold: h, start, end, bound, boundTtl, claimedEnd: Math.max(end, acted) };
}

function why(s: Span): string {
  const b = s.bound;
  const at = `${b.f} #${b.invoke.index} invoked at ${ms(b.start)}`;
  if (b.f === "release") return at;
  if (s.boundTtl === null) return `${at}, no TTL known`;
  return `${b.outcome === "info" ? `${at} (outcome unknown)` : at} + TTL ${s.boundTtl / 1e6} ms`;
}

export function checkHolds(m: Model): HoldCheck {
  const violations: Witness[] = [];
  let leaseOverlaps = 0;
  for (const [key, holds] of m.holdsByKey) {
    const spans = holds.map(spanOf).sort((a, b) => a.start - b.start);
    // Holds whose holder may still act; compacted in place as they fall behind.
    const active: Span[] = [];
    for (const s of spans) {
      let kept = 0;
      for (const a of active) {
        if (a.claimedEnd <= s.start) continue;
        active[kept++] = a;
        if (a.end > s.start && s.end > s.start) violations.push(witness(key, a, s));
        else if (s.claimedEnd > s.start) leaseOverlaps++;
      }
      active.length = kept;
      active.push(s);
    }
  }
  return { violations, leaseOverlaps };
}

function witness(key: string, a: Span, b: Span): Witness {
  const until = Math.min(a.end, b.end);
  const valid = (s: Span): string => `${quoteAcquire(s.hold)}, certainly valid until ${ms(s.end)} (${why(s)})`;
  return {
    key,
    events: eventsOf(a.hold.acquire, a.bound, b.hold.acquire, b.bound),
    explanation:
      `On key ${JSON.stringify(key)} two holds were certainly valid at once from ${ms(b.start)} to ${ms(until)}: ` +
      `${valid(a)}; and ${valid(b)}. A correct lock service cannot grant a hold while another's lease is still running.`,
  };
}
