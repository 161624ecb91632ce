// reentrancy-violation: a reentrant lock broke what reentrancy promises. Either
// another owner was certainly granted the lock while the first owner's count was
// above zero, after one of its re-entries was released (the inner release freed
// the lock: the known bug of a count kept wrongly), or a re-entry's fence broke
// the rule its client promises (the header's fence_on_reentry: "same", as
// Hazelcast's FencedLock returns, or "new", higher than the last, as Redisson's
// RFencedLock INCRs on every acquire).
import type { Witness } from "../../store/events.ts";
import { ms, quoteOp } from "../explain.ts";
import { ACQUIRE, eventsOf, INNER_RELEASE, RELEASE, type Paired } from "../paired.ts";
import { spanOf, validText } from "../mutex.ts";
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
  sweepHolds(m, ({ hold: h, at, valid }) => {
    for (const a of valid) {
      const inner = innerReleaseBefore(m, a, at);
      if (inner < 0) continue;
      told.push([ops.invoke[holds.acquire[a]], ops.invoke[holds.acquire[h]]]);
      const sa = spanOf(m, a), sb = spanOf(m, h);
      const key = m.keys.names[holds.key[h]];
      witnesses.push({
        key,
        events: eventsOf(m, holds.acquire[a], inner, sa.bound, holds.acquire[h], sb.bound),
        explanation:
          `On key ${JSON.stringify(key)} another owner was granted the lock while the first owner still held it: ${validText(m, sa)}; ` +
          `its re-entry was released by ${quoteOp(m, inner, `depth ${m.kind?.depth.get(inner) ?? "?"}`)}, which must lower the count and free nothing, ` +
          `yet ${validText(m, sb)} was granted at ${ms(sb.start)}. The inner release freed the outer hold.`,
      });
    }
  });
  witnesses.push(...fenceRuleBroken(m));
  return { witnesses, told };
}

/** The first release of a re-entry of hold `h` invoked before `t` (-1: none). */
function innerReleaseBefore(m: Paired, h: number, t: number): number {
  const ops = m.ops;
  for (let r = m.holds.first[h]; r >= 0; r = ops.next[r]) if (ops.f[r] === RELEASE && ops.notReleased[r] === INNER_RELEASE && ops.start[r] < t) return r;
  return -1;
}

/** Re-entries whose fence breaks the rule the header says the client promises. */
function fenceRuleBroken(m: Paired): Witness[] {
  const rule = m.kind?.fenceOnReentry;
  if (!rule) return [];
  const { ops, holds } = m;
  const out: Witness[] = [];
  for (let h = 0; h < holds.length; h++) {
    let last = holds.fence[h];
    let lastOp = holds.acquire[h];
    for (let r = holds.first[h]; r >= 0; r = ops.next[r]) {
      if (ops.f[r] !== ACQUIRE || ops.outcome[r] !== OK) continue;
      const fence = ops.fence[r];
      const broken = rule === "same" ? !(fence === holds.fence[h]) : !(fence > last);
      if (broken && !(Number.isNaN(fence) && Number.isNaN(last))) {
        const key = m.keys.names[holds.key[h]];
        out.push({
          key,
          events: eventsOf(m, lastOp, r),
          explanation:
            `On key ${JSON.stringify(key)} the client promises ${rule === "same" ? "that a re-entry keeps its outer hold's fence" : "a new, higher fence at every re-entry"}, ` +
            `yet ${quoteOp(m, r, `fence ${Number.isNaN(fence) ? "none" : fence}`)} re-entered after ${quoteOp(m, lastOp, `fence ${Number.isNaN(last) ? "none" : last}`)}.`,
        });
      }
      last = fence;
      lastOp = r;
    }
  }
  return out;
}
