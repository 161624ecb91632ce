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
import { eventsOf, holdsInEndOrder, INNER_RELEASE, RELEASE, RENEW, type Paired } from "./paired.ts";
import { INFO, OK, type Ops } from "./table.ts";

export interface Span {
  hold: number;
  start: number;
  /** End of certain validity (may be <= start: never certainly valid). */
  end: number;
  /** The operation whose invoke (plus its TTL, unless a release) bounds `end`. */
  bound: number;
  /** Its TTL in ms (NaN: none known; null: a release). */
  boundTtl: number | null;
  /** Until when its holder acted as the holder: at least `end`. */
  claimedEnd: number;
}

export interface HoldCheck {
  violations: Witness[];
  leaseOverlaps: number;
}

/**
 * What a hold's renews, releases and writes tell of its span, per hold (slot):
 * when its holder last acted, the acquire or renew whose lease certainly bounds
 * it and that lease's TTL, whether a renew's outcome is unknown, and its earliest
 * release (-1: none).
 */
interface Walks { acted: Float64Array; bound: Int32Array; boundTtl: Float64Array; release: Int32Array; unknownRenew: Uint8Array }

const walks = (n: number): Walks => ({ acted: new Float64Array(n), bound: new Int32Array(n), boundTtl: new Float64Array(n), release: new Int32Array(n), unknownRenew: new Uint8Array(n) });

/** Slot `slot` of `w` set to hold `h` at its acquire, before any of its other operations. */
function atAcquire(m: Paired, h: number, w: Walks, slot: number): void {
  const acquire = m.holds.acquire[h];
  w.acted[slot] = m.ops.endOf(acquire);
  w.bound[slot] = acquire;
  w.boundTtl[slot] = m.holds.ttl[h];
  w.release[slot] = -1;
  w.unknownRenew[slot] = 0;
}

/** spanOf's walk, reused: spanOf runs to its end before it is called again. */
const one = walks(1);

/** Takes operation `r`, the next of slot h's hold in invoke order (its chain), into its walk. */
function fold(ops: Ops, r: number, w: Walks, h: number): void {
  const at = ops.start[r];
  if (at > w.acted[h]) w.acted[h] = at;
  const f = ops.f[r];
  if (f === RENEW) {
    if (ops.outcome[r] === OK && at >= ops.start[w.bound[h]]) {
      w.bound[h] = r;
      w.boundTtl[h] = ops.ttl[r];
    } else if (ops.outcome[r] === INFO) w.unknownRenew[h] = 1;
  } else if (f === RELEASE && ops.notReleased[r] !== INNER_RELEASE && (w.release[h] < 0 || at < ops.start[w.release[h]])) w.release[h] = r;
}

/** The span of hold `h`, written into `into` (a fresh object unless given: the sweep reuses one). */
export function spanOf(m: Paired, h: number, into?: Span): Span {
  const { ops, holds } = m;
  const start = ops.endOf(holds.acquire[h]);
  // One walk of the hold's operations (they lie all over the columns).
  const w = one;
  atAcquire(m, h, w, 0);
  for (let r = holds.first[h]; r >= 0; r = ops.next[r]) fold(ops, r, w, 0);
  let bound = w.bound[0];
  let boundTtl: number | null = w.boundTtl[0];
  const acted = w.acted[0], release = w.release[0], unknownRenew = w.unknownRenew[0] === 1;
  const leaseFrom = ops.start[bound];
  let end = leaseFrom + (Number.isNaN(boundTtl) ? 0 : boundTtl * 1e6);
  // A later renew with an unknown outcome may have set a shorter lease.
  for (let r = unknownRenew ? holds.first[h] : -1; r >= 0; r = ops.next[r]) {
    const t = ops.ttl[r];
    if (ops.f[r] === RENEW && ops.outcome[r] === INFO && ops.start[r] >= leaseFrom && !Number.isNaN(t) && ops.start[r] + t * 1e6 < end) {
      end = ops.start[r] + t * 1e6;
      bound = r;
      boundTtl = t;
    }
  }
  if (release >= 0 && ops.start[release] < end) {
    end = ops.start[release];
    bound = release;
    boundTtl = null;
  }
  const s = into ?? { hold: h, start, end, bound, boundTtl, claimedEnd: 0 };
  s.hold = h;
  s.start = start;
  s.end = end;
  s.bound = bound;
  s.boundTtl = boundTtl;
  s.claimedEnd = Math.max(end, acted);
  return s;
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

/**
 * Every hold's span (spanOf's end and claimedEnd; its start is its acquire's
 * end), by hold, in one pass over the operations in row order: a hold's renews,
 * releases and writes come in that order (its chain), so each hold sees them as
 * spanOf's walk does, while the pass reads the columns in order where the walks
 * jump about them. A hold with a renew of unknown outcome is left to spanOf (its
 * second walk). Five numbers a hold, two of them given back as the result.
 */
export function spans(m: Paired): { end: Float64Array; claimed: Float64Array } {
  const { ops, holds } = m;
  const n = holds.length;
  const w = walks(n);
  for (let h = 0; h < n; h++) atAcquire(m, h, w, h);
  for (let r = 0; r < ops.length; r++) {
    const h = ops.hold[r];
    if (h >= 0 && holds.acquire[h] !== r) fold(ops, r, w, h);
  }
  const { acted, bound, boundTtl, release, unknownRenew } = w;
  // In place: each hold's end over its lease's TTL, its claimed end over when it last acted.
  const end = boundTtl, claimed = acted;
  const scratch: Span = { hold: -1, start: 0, end: 0, bound: -1, boundTtl: null, claimedEnd: 0 };
  for (let h = 0; h < n; h++) {
    if (unknownRenew[h]) {
      const s = spanOf(m, h, scratch);
      end[h] = s.end;
      claimed[h] = s.claimedEnd;
      continue;
    }
    const ttl = boundTtl[h];
    let e = ops.start[bound[h]] + (Number.isNaN(ttl) ? 0 : ttl * 1e6);
    if (release[h] >= 0 && ops.start[release[h]] < e) e = ops.start[release[h]];
    end[h] = e;
    claimed[h] = Math.max(e, acted[h]);
  }
  return { end, claimed };
}

export function checkHolds(m: Paired): HoldCheck {
  // An rw lock's and a semaphore's holds may overlap by design: checker/kinds
  // judges them, and a witness per overlap made here would only be thrown away
  // (a large rw run's readers overlap hundreds of thousands of times).
  if (m.header.lock === "rw" || m.header.lock === "semaphore") return { violations: [], leaseOverlaps: 0 };
  const { holds } = m;
  const violations: Witness[] = [];
  let leaseOverlaps = 0;
  // One sweep over every key at once, holds in order of their acquire's ok (equal
  // times in hold order, so each key's come as they would key by key); a walk per
  // key would jump all over the columns of a run of thousands of keys. The order
  // first: the checking thread's fence-regression then finds it made (holdsInEndOrder).
  const { order, ends: start } = holdsInEndOrder(m);
  const { end, claimed } = spans(m);
  const n = holds.length;
  // Per key, the holds whose holder may still act, in a stretch of `active` of its
  // own (as many places as the key has holds), compacted as they fall behind.
  const keys = m.keys.names.length;
  const from = new Int32Array(keys + 1);
  for (let h = 0; h < n; h++) from[holds.key[h] + 1]++;
  for (let k = 0; k < keys; k++) from[k + 1] += from[k];
  const live = new Int32Array(keys);
  const active = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const h = order[i];
    const k = holds.key[h];
    const base = from[k];
    const s = start[h];
    let kept = 0;
    for (let j = 0; j < live[k]; j++) {
      const a = active[base + j];
      if (claimed[a] <= s) continue;
      active[base + kept++] = a;
      if (end[a] > s && end[h] > s) violations.push(witness(m, m.keys.names[k], spanOf(m, a), spanOf(m, h)));
      else if (claimed[h] > s) leaseOverlaps++;
    }
    live[k] = kept;
    active[base + live[k]++] = h;
  }
  return { violations, leaseOverlaps };
}

/** A hold as a witness quotes it: its acquire, and until when it was certainly valid, and why. */
export const validText = (m: Paired, s: Span): string => `${quoteAcquire(m, s.hold)}, certainly valid until ${ms(s.end)} (${why(m, s)})`;

function witness(m: Paired, key: string, a: Span, b: Span): Witness {
  const until = Math.min(a.end, b.end);
  const valid = (s: Span): string => validText(m, s);
  return {
    key,
    events: eventsOf(m, m.holds.acquire[a.hold], a.bound, m.holds.acquire[b.hold], b.bound),
    explanation:
      `On key ${JSON.stringify(key)} two holds were certainly valid at once from ${ms(b.start)} to ${ms(until)}: ` +
      `${valid(a)}; and ${valid(b)}. A correct lock service cannot grant a hold while another's lease is still running.`,
  };
}
