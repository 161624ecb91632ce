// reentrancy-violation: a reentrant lock broke what reentrancy promises. Either
// another owner was certainly granted the lock while the first owner's count was
// above zero, after one of its re-entries was released (the inner release freed
// the lock: the known bug of a count kept wrongly); or a re-entry was granted to a
// process that did not hold the lock at the depth below (another process, or no
// outer hold at all); or a re-entry's fence broke the rule its client promises
// (the header's fence_on_reentry: "same", as Hazelcast's FencedLock returns, or
// "new", higher than the last, as Redisson's RFencedLock INCRs on every acquire).
import type { Witness } from "../../store/events.ts";
import { ms, quoteOp } from "../explain.ts";
import { ACQUIRE, eventsOf, INNER_RELEASE, RELEASE, type Paired } from "../paired.ts";
import { validText } from "../mutex.ts";
import { spanAt, spansOf } from "../spans.ts";
import { OK } from "../table.ts";
import { sweepHolds } from "./overlaps.ts";

export interface Reentrancy {
  witnesses: Witness[];
  /** Pairs of acquire invoke indexes whose overlap is told here, not as a mutex-violation too. */
  told: [number, number][];
}

export function reentrancyViolations(m: Paired): Reentrancy {
  const witnesses: Witness[] = [];
  const told: [number, number][] = [];
  const { ops, holds } = m;
  sweepHolds(m, ({ hold: h, at, firstMet }) => {
    for (const a of firstMet) {
      const inner = innerReleaseBefore(m, a, at);
      if (inner < 0) continue;
      told.push([ops.invoke[holds.acquire[a]], ops.invoke[holds.acquire[h]]]);
      const sa = spanAt(m, a, at), sb = spanAt(m, h, at);
      const key = m.keys.names[holds.key[h]];
      witnesses.push({
        key,
        events: eventsOf(m, holds.acquire[a], inner, sa.from, sa.bound, holds.acquire[h], sb.from, sb.bound),
        explanation:
          `On key ${JSON.stringify(key)} another owner was granted the lock while the first owner still held it: ${validText(m, sa)}; ` +
          `its re-entry was released by ${quoteOp(m, inner, `depth ${m.kind?.depth.get(inner) ?? "?"}`)}, which must lower the count and free nothing, ` +
          `yet ${validText(m, sb)} was granted at ${ms(at)}. The inner release freed the outer hold.`,
      });
    }
  });
  witnesses.push(...reentriesNotHeld(m), ...fenceRuleBroken(m));
  return { witnesses, told };
}

/**
 * Re-entries granted to a process that did not hold the owner's hold at the depth
 * below (docs/anomalies.md, reentrancy-violation): another process; no outer hold
 * of that owner and key at all (pairing found none, so the re-entry has no hold);
 * one released at depth 1 before; no entry of its process at the depth below
 * (granted before it was invoked and not released at that depth since);
 * or one not certainly valid at any moment between the re-entry's invoke and its
 * ok. For that last, an earlier re-entry's span (its ok to its invoke plus its
 * TTL) counts as the hold's too, since a re-entry may refresh the lease (the
 * holds' spans for the other rules do not count it: a client may not refresh);
 * a hold whose TTL is not known is not judged by time.
 */
function reentriesNotHeld(m: Paired): Witness[] {
  const { ops, holds } = m;
  const depths = m.kind?.depth;
  if (!depths) return [];
  const out: Witness[] = [];
  const say = (r: number, why: string, outer = -1): void => {
    const key = ops.key[r] >= 0 ? m.keys.names[ops.key[r]] : "";
    out.push({
      key,
      events: eventsOf(m, outer, r),
      explanation: `On key ${JSON.stringify(key)} ${quoteOp(m, r, `depth ${depths.get(r)}, owner ${JSON.stringify(m.owners.names[ops.owner[r]] ?? null)}`)} was granted as a re-entry, ${why}. A reentrant lock lets only the holder enter again.`,
    });
  };
  // Re-entries with no hold to enter: pairing tied none to them.
  for (let r = 0; r < ops.length; r++) {
    if (ops.f[r] === ACQUIRE && ops.outcome[r] === OK && ops.hold[r] < 0 && (depths.get(r) ?? 1) > 1) say(r, "yet no acquire of its owner on this key had returned ok: there was no outer hold");
  }
  for (let h = 0; h < holds.length; h++) {
    const acquire = holds.acquire[h];
    const process = ops.process[acquire];
    const entries = entriesOf(m, h);
    if (entries.length === 1) continue;
    // Its releases, by depth.
    const releases: number[] = [];
    for (let r = holds.first[h]; r >= 0; r = ops.next[r]) if (ops.f[r] === RELEASE) releases.push(r);
    const depthOf = (r: number): number => (r === acquire ? 1 : (depths.get(r) ?? 1));
    // The hold's certain spans, cut at its release, and the spans of its re-entries rightly granted (below).
    const spans = spansOf(m, h).filter((x) => x.end > x.start).map((x) => ({ start: x.start, end: x.end }));
    const timed = !Number.isNaN(holds.ttl[h]);
    for (const r of entries) {
      if (r === acquire) continue;
      const depth = depthOf(r);
      const invoked = ops.start[r], answered = ops.endOf(r);
      const freed = releases.find((x) => ops.notReleased[x] !== INNER_RELEASE && ops.start[x] < invoked);
      // Its process's entry at the depth below, granted before it was invoked and not released at that depth since.
      const below = (p: number): boolean =>
        depthOf(p) === depth - 1 && p !== r && ops.endOf(p) <= invoked &&
        !releases.some((x) => (depths.get(x) ?? 1) === depth - 1 && ops.start[x] > ops.endOf(p) && ops.start[x] < invoked);
      const mine = entries.filter((p) => below(p) && ops.process[p] === ops.process[r]);
      const theirs = entries.filter((p) => below(p) && ops.process[p] !== ops.process[r]);
      let rightly = false;
      if (ops.process[r] !== process) say(r, `yet the hold is process ${process}'s: another process entered it`, acquire);
      else if (freed !== undefined) say(r, `after its outer hold was released by ${quoteOp(m, freed)}`, freed);
      else if (mine.length === 0)
        say(r, theirs.length ? `yet its entry at depth ${depth - 1} was process ${ops.process[theirs[theirs.length - 1]]}'s` : `while its owner did not hold it at depth ${depth - 1}`, acquire);
      else if (timed && !spans.some((x) => x.start <= answered && invoked < x.end))
        say(r, `yet its outer hold was not certainly valid at any moment from its invoke to its ok (${spansText(spans)})`, acquire);
      else rightly = true;
      // Only a re-entry rightly granted counts as refreshing the lease.
      const ttl = ops.ttl[r];
      if (rightly && !Number.isNaN(ttl) && invoked + ttl * 1e6 > answered) spans.push({ start: answered, end: invoked + ttl * 1e6 });
    }
  }
  return out;
}

const spansText = (spans: { start: number; end: number }[]): string =>
  spans.length === 0 ? "it never was" : `certainly valid ${spans.map((x) => `from ${ms(x.start)} to ${ms(x.end)}`).join(", ")}`;

/** The first release of a re-entry of hold `h` invoked before `t` (-1: none). */
function innerReleaseBefore(m: Paired, h: number, t: number): number {
  const ops = m.ops;
  for (let r = m.holds.first[h]; r >= 0; r = ops.next[r]) if (ops.f[r] === RELEASE && ops.notReleased[r] === INNER_RELEASE && ops.start[r] < t) return r;
  return -1;
}

/** A hold's entries: its acquire (depth 1), then its re-entries granted ok, as paired. */
function entriesOf(m: Paired, h: number): number[] {
  const { ops, holds } = m;
  const entries = [holds.acquire[h]];
  for (let r = holds.first[h]; r >= 0; r = ops.next[r]) if (ops.f[r] === ACQUIRE && ops.outcome[r] === OK) entries.push(r);
  return entries;
}

/** Re-entries whose fence breaks the rule the header says the client promises. */
function fenceRuleBroken(m: Paired): Witness[] {
  const rule = m.kind?.fenceOnReentry;
  if (!rule) return [];
  const { ops, holds } = m;
  const out: Witness[] = [];
  for (let h = 0; h < holds.length; h++) {
    const entries = entriesOf(m, h);
    const fenceOf = (p: number): number => (p === holds.acquire[h] ? holds.fence[h] : ops.fence[p]);
    for (const r of entries.slice(1)) {
      // "same" against the outer entry; "new" against the entry granted last before it (by ok, strictly earlier).
      const granted = ops.endOf(r);
      const before = entries.filter((p) => p !== r && ops.endOf(p) < granted);
      if (rule === "new" && before.length === 0) continue;
      const lastOp = rule === "same" ? holds.acquire[h] : before.reduce((a, b) => (ops.endOf(b) > ops.endOf(a) ? b : a));
      const fence = ops.fence[r];
      const last = fenceOf(lastOp);
      // "same": the outer fence, none where it had none; "new": above the last, judged only where both are known.
      const broken = rule === "same" ? !(fence === holds.fence[h] || (Number.isNaN(fence) && Number.isNaN(holds.fence[h]))) : !Number.isNaN(fence) && !Number.isNaN(last) && !(fence > last);
      if (broken) {
        const key = m.keys.names[holds.key[h]];
        out.push({
          key,
          events: eventsOf(m, lastOp, r),
          explanation:
            `On key ${JSON.stringify(key)} the client promises ${rule === "same" ? "that a re-entry keeps its outer hold's fence" : "a new, higher fence at every re-entry"}, ` +
            `yet ${quoteOp(m, r, `fence ${Number.isNaN(fence) ? "none" : fence}`)} re-entered after ${quoteOp(m, lastOp, `fence ${Number.isNaN(last) ? "none" : last}`)}.`,
        });
      }
    }
  }
  return out;
}
