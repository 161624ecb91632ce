// What a lock other than a plain mutex promises, beyond the spans of holds.ts:
// docs/anomalies.md "reentrancy-violation" and "grant-after-cancel".
// (rw-violation and semaphore-overflow are pair/overlap rules over the spans and
// live in holds.ts.)
//
// reentrancy-violation is found three ways, each one witness:
//  (a) anomalies.md: another hold G of the key granted (its acquire's ok) while
//      hold H was still certainly valid, after a release at depth >= 2 of H was
//      invoked: the inner release freed the outer hold. As for a
//      mutex-violation, which such a pair is not told again as, G must itself
//      be certainly valid past its grant. One per pair (H, G).
//  (b) anomalies.md: a re-entry whose ok's fence is not its hold's
//      (fence_on_reentry "same"), or not above the fence of the entry before it
//      ("new"). One per re-entry. Not judged without fence_on_reentry.
//  (c) history-format.md (amended 2026-11-29): a re-entry (depth n > 1) is granted
//      rightly only to the process holding the same owner's hold at depth n - 1
//      while that hold is certainly valid; granted to another process, or with
//      no such outer hold, it is a violation. One per re-entry. The grant
//      happened somewhere between the re-entry's invoke and its ok, so it is
//      rightly granted when the hold was certainly valid at some moment of that
//      stretch.
import { endingRelease, pairKey, ttlOf, validAt } from "./holds.ts";
import { holdText, ms, opEvents, opText } from "./describe.ts";
import type { Findings, Hold, Op, Run, Witness } from "./types.ts";

const depth = (op: Op): number => (typeof op.iv.depth === "number" ? op.iv.depth : 1);

export function reentrancy(run: Run, holds: Hold[], stray: Op[]): { findings: Findings; toldPairs: Set<string> } {
  const toldPairs = new Set<string>();
  if (run.header.lock !== "reentrant") return { findings: {}, toldPairs };
  const out: Witness[] = [];

  // (a) an inner release that freed the outer hold.
  for (const h of holds) {
    const inner = h.releases.filter((r) => depth(r) > 1);
    if (!inner.length) continue;
    for (const g of holds) {
      if (g === h || g.key !== h.key || g.owner === h.owner) continue;
      // g granted: its acquire's ok, or a late renew's that starts a span (anomalies.md, "The lock kinds").
      const granted = [g.acquire.done!.time, ...g.spans.map((x) => x.start)].find((t) => inner.some((r) => r.invoke.time < t) && validAt(h, t) && validAt(g, t));
      if (granted === undefined) continue;
      // One there is: the time was found among those after an inner release's invoke.
      const r = inner.find((r) => r.invoke.time < granted)!;
      if (toldPairs.has(pairKey(h, g))) continue;
      toldPairs.add(pairKey(h, g));
      out.push({
        key: h.key,
        events: opEvents(h.acquire, r, g.acquire, endingRelease(run, h)),
        explanation: `On key ${JSON.stringify(h.key)} another owner was granted the lock while the first owner still held it: ${holdText(h)}; its re-entry was released by ${opText(r)} (depth ${depth(r)}), which must lower the count and free nothing, yet ${holdText(g)} was granted at ${ms(granted)}. The inner release freed the outer hold.`,
      });
    }
  }

  // (b) the fence a re-entry got, against the header's promise.
  const promise = run.header.fenceOnReentry;
  if (promise)
    for (const h of holds)
      for (const e of h.reentries) {
        const fence = e.ov.fence ?? null;
        if (promise === "same" && fence !== h.fence) {
          out.push({
            key: h.key,
            events: opEvents(h.acquire, e),
            explanation: `On key ${JSON.stringify(h.key)} the client promises that a re-entry keeps its outer hold's fence, yet ${opText(e)} re-entered after ${opText(h.acquire)}.`,
          });
        }
        if (promise === "new") {
          const prev = [h.acquire, ...h.reentries].filter((p) => p !== e && p.done!.time < e.done!.time).sort((a, b) => b.done!.time - a.done!.time)[0];
          const pf = prev?.ov.fence;
          if (typeof fence === "number" && typeof pf === "number" && fence <= pf)
            out.push({
              key: h.key,
              events: opEvents(prev, e),
              explanation: `On key ${JSON.stringify(h.key)} the client promises that every re-entry gets a new, higher fence, yet ${opText(e)} got fence ${fence}, not above the ${pf} of the entry before it, ${opText(prev)}.`,
            });
        }
      }

  // (c) who a re-entry was granted to (history-format.md, amended).
  const reentries = [...holds.flatMap((h) => h.reentries.map((e) => ({ e, h: h as Hold | undefined }))), ...stray.map((e) => ({ e, h: undefined }))];
  // A re-entry rightly granted may have refreshed the lease: for this rule its
  // span (ok to invoke + TTL) counts as its hold's too (anomalies.md). A hold
  // with no TTL is not judged by time.
  const refreshed = new Map<Hold, { start: number; end: number }[]>();
  for (const { e, h } of reentries) {
    const n = depth(e);
    const why = ((): string | null => {
      if (!h) return `no hold of owner ${JSON.stringify(e.ov.owner)} on the key was ever granted, so there was no outer hold to re-enter`;
      // The entry at depth n - 1, granted before the re-entry was invoked and not released (at depth n - 1) since.
      const entries = [h.acquire, ...h.reentries]
        .filter((p) => (p === h.acquire ? 1 : depth(p)) === n - 1 && p !== e && p.done!.time <= e.invoke.time)
        .filter((p) => !h.releases.some((r) => depth(r) === n - 1 && r.invoke.time > p.done!.time && r.invoke.time < e.invoke.time));
      // The re-entering process's own entry at depth n - 1, if it has one; else whose it was.
      const outer = entries.filter((p) => p.process === e.process).pop();
      if (!outer) {
        const theirs = entries.pop();
        if (!theirs) return `hold ${JSON.stringify(h.owner)} was not held at depth ${n - 1} when the re-entry was invoked`;
        return `the hold at depth ${n - 1} was process ${theirs.process}'s (${opText(theirs)}), not process ${e.process}'s`;
      }
      // The outermost hold is its acquirer's: another process entering any depth of it is not its holder.
      if (h.acquire.process !== e.process) return `the hold at depth 1 was process ${h.acquire.process}'s (${opText(h.acquire)}), not process ${e.process}'s`;
      const freed = h.releases.find((r) => depth(r) === 1 && r.invoke.time < e.invoke.time);
      if (freed) return `its outer hold was released by ${opText(freed)} before`;
      const from = e.invoke.time;
      const to = e.done!.time;
      const spans = [...h.spans, ...(refreshed.get(h) ?? [])];
      if (ttlOf(h.acquire) !== undefined && !spans.some((s) => s.start <= to && s.end > from))
        return `hold ${JSON.stringify(h.owner)} was not certainly valid at any moment between the re-entry's invoke and its ok (${h.spans.length ? h.spans.map((s) => `certainly valid from ${ms(s.start)} until ${ms(s.end)}`).join(", ") : "it was never certainly valid"})`;
      return null;
    })();
    if (why === null) {
      const ttl = ttlOf(e);
      if (h && ttl !== undefined) refreshed.set(h, [...(refreshed.get(h) ?? []), { start: e.done!.time, end: e.invoke.time + ttl * 1e6 }]);
      continue;
    }
    out.push({
      key: e.key,
      events: opEvents(h?.acquire, e),
      explanation: `On key ${JSON.stringify(e.key)} ${opText(e)} was granted as a re-entry at depth ${n}, but ${why}: a re-entry is granted rightly only to the process holding the same owner's hold at depth ${n - 1} while that hold is certainly valid.`,
    });
  }
  return { findings: out.length ? { "reentrancy-violation": out } : {}, toldPairs };
}

/**
 * anomalies.md "grant-after-cancel": an acquire that completed fail cancelled,
 * naming its entry's owner, and after it either an acquire of the key invoked
 * after that completion whose completion's `behind` names the owner, or a hold
 * of the key with that owner. One witness per acquire that waited behind it, and one for the hold granted to it.
 */
export function grantAfterCancel(run: Run): Findings {
  const out: Witness[] = [];
  // Acquires by the entry their completion says they waited behind, and by the owner they were granted, per key.
  const id = (key: string, owner: unknown) => JSON.stringify([key, owner]);
  const waitedBehind = new Map<string, Op[]>();
  const grantedTo = new Map<string, Op[]>();
  for (const x of run.ops) {
    if (x.f !== "acquire" || x.done === null) continue;
    if (typeof x.ov.behind === "string") {
      if (!waitedBehind.has(id(x.key, x.ov.behind))) waitedBehind.set(id(x.key, x.ov.behind), []);
      waitedBehind.get(id(x.key, x.ov.behind))!.push(x);
    }
    // Outermost grants only: a re-entry is its hold's, already counted with it.
    if (x.outcome === "ok" && depth(x) === 1) grantedTo.set(id(x.key, x.ov.owner), [...(grantedTo.get(id(x.key, x.ov.owner)) ?? []), x]);
  }
  for (const c of run.ops) {
    if (c.f !== "acquire" || c.outcome !== "fail" || c.error !== "cancelled" || typeof c.ov.owner !== "string") continue;
    const owner = c.ov.owner;
    // One witness per acquire that waited behind the withdrawn entry afterwards, and one for a hold granted to it.
    for (const behind of (waitedBehind.get(id(c.key, owner)) ?? []).filter((x) => x !== c && x.invoke.time > c.done!.time))
      out.push({
        key: c.key,
        events: opEvents(c, behind),
        explanation: `On key ${JSON.stringify(c.key)} ${opText(c, { owner })} was withdrawn, the service certainly rid of its waiter; yet ${opText(behind)} waited behind that entry afterwards (its client says it waited behind ${JSON.stringify(owner)}).`,
      });
    for (const granted of grantedTo.get(id(c.key, owner)) ?? [])
      out.push({
        key: c.key,
        events: opEvents(c, granted),
        explanation: `On key ${JSON.stringify(c.key)} ${opText(c, { owner })} was withdrawn, the service certainly rid of its waiter; yet ${opText(granted)} was a hold with that entry's owner: the service granted the withdrawn entry.`,
      });
  }
  return out.length ? { "grant-after-cancel": out } : {};
}
