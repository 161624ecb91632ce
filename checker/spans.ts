// A hold's spans of certain validity (docs/anomalies.md, mutex-violation), and
// the one sweep over every key's holds that mutex.ts and checker/kinds share.
//
// A hold is certainly valid over the union, for its acquire and each renew that
// returned ok, of the span from that operation's ok to its invoke plus its TTL:
// the lease cannot have started before the request left the client, nor was it
// certainly in effect before the answer came. Each span is cut at the invoke of a
// later renew (ok or of unknown outcome) plus that renew's TTL where that is
// earlier (the renew may have set a shorter lease), and every span at the hold's
// release invoke. A renew answered after the span before it had ended (a late
// renew) starts a new span at its ok: the gap between is not certainly valid,
// since the lock may have been free, and granted to someone else, there. Running
// one span from the acquire to the last renew through such a gap made the
// checker report overlaps inside the lapse beside a lost-lock-unnoticed witness
// saying the lease had run out by then.
//
// Nearly every hold has one span; the few with a late renew keep their earlier
// spans apart (`earlier`), so a run of millions of holds stays in columns.
import { holdsInEndOrder, INNER_RELEASE, RELEASE, RENEW, type Paired } from "./paired.ts";
import { INFO, OK, type Ops } from "./table.ts";

export interface Span {
  hold: number;
  start: number;
  /** End of certain validity (<= start: never certainly valid). */
  end: number;
  /** The acquire or renew whose ok starts the span. */
  from: number;
  /** The operation whose invoke (plus its TTL, unless a release) bounds `end`. */
  bound: number;
  /** Its TTL in ms (NaN: none known; null: a release). */
  boundTtl: number | null;
  /** Until when its holder acted as the holder: at least the hold's last end. */
  claimedEnd: number;
}

/** Every hold's spans from one pass over the operations. */
export interface HoldSpans {
  /** Each hold's last span (end <= start: the hold ends never certainly valid). */
  start: Float64Array;
  end: Float64Array;
  /** Until when each hold's holder acted as its holder: at least its last end. */
  claimed: Float64Array;
  /** The spans before the last, of the holds with a late renew, in time order. */
  earlier: Map<number, { start: number; end: number }[]>;
}

/** The open span of each hold (slot) as its operations are folded in, and its release. */
interface Walks {
  start: Float64Array;
  end: Float64Array;
  from: Int32Array;
  bound: Int32Array;
  boundTtl: Float64Array;
  acted: Float64Array;
  /** The earliest release invoke (Infinity: none), and that release. */
  cut: Float64Array;
  cutOp: Int32Array;
}

const walks = (n: number): Walks => ({
  start: new Float64Array(n), end: new Float64Array(n), from: new Int32Array(n), bound: new Int32Array(n),
  boundTtl: new Float64Array(n), acted: new Float64Array(n), cut: new Float64Array(n), cutOp: new Int32Array(n),
});

/** Called with a slot's span when a late renew closes it (only if it is not empty). */
type Close = (slot: number, start: number, end: number, from: number, bound: number, boundTtl: number) => void;

/** Slot `i` of `w` set to hold `h` at its acquire, before any of its other operations. */
function atAcquire(m: Paired, h: number, w: Walks, i: number): void {
  const acquire = m.holds.acquire[h];
  const ttl = m.holds.ttl[h];
  w.start[i] = m.ops.endOf(acquire);
  w.end[i] = m.ops.start[acquire] + (Number.isNaN(ttl) ? 0 : ttl * 1e6);
  w.from[i] = acquire;
  w.bound[i] = acquire;
  w.boundTtl[i] = ttl;
  w.acted[i] = w.start[i];
  w.cut[i] = Infinity;
  w.cutOp[i] = -1;
}

/** Takes operation `r`, the next of slot i's hold in invoke order (its chain), into its walk. */
function fold(ops: Ops, r: number, w: Walks, i: number, close: Close): void {
  const at = ops.start[r];
  if (at > w.acted[i]) w.acted[i] = at;
  const f = ops.f[r];
  if (f === RENEW) {
    const outcome = ops.outcome[r];
    const ttl = ops.ttl[r];
    // A failed renew certainly did nothing; one of unknown outcome whose TTL is not known tells nothing.
    if (outcome !== OK && !(outcome === INFO && !Number.isNaN(ttl))) return;
    const until = at + (Number.isNaN(ttl) ? 0 : ttl * 1e6);
    if (w.end[i] > until) set(w, i, until, r, ttl);
    if (outcome !== OK) return;
    const ok = ops.endOf(r);
    if (ok <= w.end[i]) set(w, i, until, r, ttl);
    else {
      // A late renew: what came before it ends where it ended.
      if (w.end[i] > w.start[i]) close(i, w.start[i], w.end[i], w.from[i], w.bound[i], w.boundTtl[i]);
      w.start[i] = ok;
      w.from[i] = r;
      set(w, i, until, r, ttl);
    }
  } else if (f === RELEASE && ops.notReleased[r] !== INNER_RELEASE && at < w.cut[i]) {
    w.cut[i] = at;
    w.cutOp[i] = r;
  }
}

function set(w: Walks, i: number, end: number, bound: number, ttl: number): void {
  w.end[i] = end;
  w.bound[i] = bound;
  w.boundTtl[i] = ttl;
}

/** Hold h's spans, each with the operations that start and bound it, in time order (none: never certainly valid). */
export function spansOf(m: Paired, h: number): Span[] {
  const { ops, holds } = m;
  const w = walks(1);
  atAcquire(m, h, w, 0);
  const out: Span[] = [];
  const close: Close = (_, start, end, from, bound, boundTtl) => out.push({ hold: h, start, end, from, bound, boundTtl, claimedEnd: 0 });
  for (let r = holds.first[h]; r >= 0; r = ops.next[r]) fold(ops, r, w, 0, close);
  close(0, w.start[0], w.end[0], w.from[0], w.bound[0], w.boundTtl[0]);
  const cut = w.cut[0];
  const kept: Span[] = [];
  for (const s of out) {
    if (s.start >= cut) continue;
    if (s.end > cut) Object.assign(s, { end: cut, bound: w.cutOp[0], boundTtl: null });
    if (s.end > s.start) kept.push(s);
  }
  const claimed = Math.max(w.acted[0], ...kept.map((s) => s.end));
  for (const s of kept) s.claimedEnd = claimed;
  if (kept.length > 0) return kept;
  // A hold never certainly valid still has a span to quote: its acquire's, empty.
  const first = out[0];
  return [first.end > cut ? { ...first, end: cut, bound: w.cutOp[0], boundTtl: null, claimedEnd: claimed } : { ...first, claimedEnd: claimed }];
}

/** Hold h's span that holds moment t, or its last one. */
export function spanAt(m: Paired, h: number, t: number): Span {
  const all = spansOf(m, h);
  return all.find((s) => s.start <= t && t < s.end) ?? all[all.length - 1];
}

/**
 * Every hold's spans in one pass over the operations in row order: a hold's
 * renews, releases and writes come in that order (its chain), so each hold sees
 * them as spansOf's walk does, while the pass reads the columns in order where
 * the walks jump about them.
 */
export function holdSpans(m: Paired): HoldSpans {
  const { ops, holds } = m;
  const n = holds.length;
  const w = walks(n);
  for (let h = 0; h < n; h++) atAcquire(m, h, w, h);
  const earlier = new Map<number, { start: number; end: number }[]>();
  const close: Close = (h, start, end) => {
    const list = earlier.get(h);
    if (list) list.push({ start, end });
    else earlier.set(h, [{ start, end }]);
  };
  for (let r = 0; r < ops.length; r++) {
    const h = ops.hold[r];
    if (h >= 0 && holds.acquire[h] !== r) fold(ops, r, w, h, close);
  }
  const { start, end, acted: claimed, cut } = w;
  for (let h = 0; h < n; h++) {
    if (end[h] > cut[h]) end[h] = cut[h];
    let last = end[h] > start[h] ? end[h] : -Infinity;
    const before = earlier.get(h);
    if (before) {
      const kept = before.filter((s) => s.start < cut[h]).map((s) => ({ start: s.start, end: Math.min(s.end, cut[h]) }));
      if (kept.length > 0) {
        earlier.set(h, kept);
        last = Math.max(last, kept[kept.length - 1].end);
      } else earlier.delete(h);
    }
    if (last > claimed[h]) claimed[h] = last;
  }
  return { start, end, claimed, earlier };
}

/** Whether hold h is certainly valid at moment t. */
export function validAt(s: HoldSpans, h: number, t: number): boolean {
  if (s.start[h] <= t && t < s.end[h]) return true;
  const before = s.earlier.get(h);
  if (!before) return false;
  for (const x of before) if (x.start <= t && t < x.end) return true;
  return false;
}

/** What the sweep tells of one moment a hold was granted: its acquire's ok, or a late renew's. */
export interface Met {
  hold: number;
  at: number;
  /** Its acquire's ok (false: a late renew's, which starts a new span). */
  grant: boolean;
  /** Other holds of the key certainly valid at `at`, when this one is too (empty otherwise). */
  valid: number[];
  /** Of those, the ones never met before as certainly valid beside this one (each pair of holds is met once). */
  firstMet: number[];
  /** At the acquire's ok only: holds of the key whose holder still acted as one without being certainly valid (a lease that ran out). */
  acting: number[];
}

/**
 * One sweep over every key at once: each hold's grants (its acquire's ok, and the
 * ok of each late renew) in time order, equal times in hold order, each handed
 * the holds of its key still certainly valid, or still acting, at that moment.
 * Two holds whose spans meet are both valid at the later of the two starts, so a
 * meeting is always seen at some grant. Holds whose holder may still act are
 * kept per key in a stretch of `active` of its own, compacted as they fall behind
 * (a walk per key would jump all over the columns of a run of thousands of keys).
 */
export function sweepGrants(m: Paired, s: HoldSpans, meet: (x: Met) => void): void {
  const { holds } = m;
  const { order, ends: granted } = holdsInEndOrder(m);
  const n = holds.length;
  // Late renews' grants, in time order, merged into the acquires' as the sweep goes.
  const again: { hold: number; at: number }[] = [];
  for (let h = 0; h < n; h++) {
    for (const x of s.earlier.get(h) ?? []) if (x.start > granted[h]) again.push({ hold: h, at: x.start });
    if (s.start[h] > granted[h] && s.end[h] > s.start[h]) again.push({ hold: h, at: s.start[h] });
  }
  again.sort((a, b) => a.at - b.at || a.hold - b.hold);
  const keys = m.keys.names.length;
  const from = new Int32Array(keys + 1);
  for (let h = 0; h < n; h++) from[holds.key[h] + 1]++;
  for (let k = 0; k < keys; k++) from[k + 1] += from[k];
  const live = new Int32Array(keys);
  const active = new Int32Array(n);
  const met = new Set<string>();
  let j = 0;
  const visit = (h: number, at: number, grant: boolean): void => {
    const k = holds.key[h];
    const base = from[k];
    const mine = validAt(s, h, at);
    const valid: number[] = [], firstMet: number[] = [], acting: number[] = [];
    let kept = 0;
    for (let i = 0; i < live[k]; i++) {
      const a = active[base + i];
      if (s.claimed[a] <= at && a !== h) continue;
      active[base + kept++] = a;
      if (a === h) continue;
      if (mine && validAt(s, a, at)) {
        valid.push(a);
        const pair = a < h ? `${a} ${h}` : `${h} ${a}`;
        if (!met.has(pair)) {
          met.add(pair);
          firstMet.push(a);
        }
      } else if (grant) acting.push(a);
    }
    live[k] = kept;
    if (grant) active[base + live[k]++] = h;
    if (valid.length > 0 || acting.length > 0) meet({ hold: h, at, grant, valid, firstMet, acting });
  };
  for (let i = 0; i < n; i++) {
    const h = order[i];
    for (; j < again.length && again[j].at < granted[h]; j++) visit(again[j].hold, again[j].at, false);
    visit(h, granted[h], true);
  }
  for (; j < again.length; j++) visit(again[j].hold, again[j].at, false);
}
