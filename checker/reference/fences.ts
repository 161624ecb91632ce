// The fences the lock service issued, from the acquires alone: docs/anomalies.md
// "The fences" (duplicate-fence, fence-regression). Under a reentrant lock a
// re-entry is an operation of its outermost hold, and duplicate-fence is judged
// per outermost hold (history-format.md "Lock kinds"): the fences compared are
// the outermost acquires'; a re-entry's fence is judged by reentrancy-violation's
// fence rule (fence_on_reentry), not here.
import { opEvents, opText } from "./describe.ts";
import type { Findings, Hold, Op, Witness } from "./types.ts";

const okTime = (op: Op) => op.done!.time;

/** Two holds of one key given the same fence (not null): each later hold reported against the first that had it. */
export function duplicateFence(holds: Hold[]): Findings {
  const out: Witness[] = [];
  for (const key of [...new Set(holds.map((h) => h.key))]) {
    // Every outermost hold's fence on the key, in the order of their oks.
    const grants: Array<{ hold: Hold; op: Op; fence: number }> = [];
    for (const h of holds.filter((h) => h.key === key))
      if (typeof h.acquire.ov.fence === "number") grants.push({ hold: h, op: h.acquire, fence: h.acquire.ov.fence });
    grants.sort((a, b) => okTime(a.op) - okTime(b.op) || a.op.done!.index - b.op.done!.index);
    const first = new Map<number, { hold: Hold; op: Op }>();
    const told = new Set<string>();
    for (const g of grants) {
      const f = first.get(g.fence);
      if (!f) {
        first.set(g.fence, g);
        continue;
      }
      if (f.hold === g.hold || told.has(`${g.hold.id}/${g.fence}`)) continue;
      told.add(`${g.hold.id}/${g.fence}`);
      out.push({
        key,
        events: opEvents(f.op, g.op),
        explanation: `On key ${JSON.stringify(key)}, ${opText(f.op)} and ${opText(g.op)} gave two different holds the same fence ${g.fence}, so the resource cannot tell their writes apart.`,
      });
    }
  }
  return out.length ? { "duplicate-fence": out } : {};
}

/**
 * A hold whose acquire was invoked after another hold's acquire returned ok with
 * a higher fence; the witness names the highest. One sweep per key: holds by
 * their acquire's ok, taken in as each hold's acquire is invoked.
 */
export function fenceRegression(holds: Hold[]): Findings {
  const out: Witness[] = [];
  for (const key of [...new Set(holds.map((h) => h.key))]) {
    const fenced = holds.filter((h) => h.key === key && h.fence !== null);
    const byOk = [...fenced].sort((a, b) => okTime(a.acquire) - okTime(b.acquire));
    let top: Hold | null = null;
    let next = 0;
    for (const h of [...fenced].sort((a, b) => a.acquire.invoke.time - b.acquire.invoke.time)) {
      for (; next < byOk.length && okTime(byOk[next].acquire) < h.acquire.invoke.time; next++)
        if (!top || (byOk[next].fence as number) > (top.fence as number)) top = byOk[next];
      if (!top || (top.fence as number) <= (h.fence as number)) continue;
      out.push({
        key,
        events: opEvents(top.acquire, h.acquire),
        explanation: `On key ${JSON.stringify(key)}, ${opText(top.acquire)}; the later ${opText(h.acquire)} was invoked after that ok (at ${(h.acquire.invoke.time / 1e6).toFixed(3)} ms) yet got the lower fence ${h.fence} < ${top.fence}.`,
      });
    }
  }
  return out.length ? { "fence-regression": out } : {};
}
