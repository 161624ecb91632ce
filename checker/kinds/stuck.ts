// stuck-lock, a liveness finding: acquires of a key were waiting, and for longer
// than the threshold (the TTL plus the command timeout: by then any lease of a
// dead holder has run out and a waiter has been answered) nobody held the key
// and nobody was granted it. A lock free but not granted is a queue stalled
// behind something that is not there: a withdrawn waiter's entry whose delete
// was lost, a holder's entry left by a crash. The witness names the waiting
// acquires and, where their clients said, whose entry they waited behind.
import type { Witness } from "../../store/events.ts";
import { ms, quoteOp } from "../explain.ts";
import { ACQUIRE, eventsOf, type Paired } from "../paired.ts";
import { holdSpans } from "../spans.ts";
import { FAIL } from "../table.ts";

/** How many waits a witness quotes. */
const QUOTED = 3;

export function stuckLocks(m: Paired, thresholdMs: number): Witness[] {
  const { ops, holds } = m;
  const threshold = thresholdMs * 1e6;
  const { claimed } = holdSpans(m);
  // Outermost acquires only: a re-entry waits for nothing but its own hold.
  const depth = m.kind?.depth;
  const reentry = { has: (i: number): boolean => (depth?.get(i) ?? 1) > 1 };
  // Per key: the waits (an acquire's invoke to its completion, or the run's end) and the holds (grant to when its holder last acted).
  const waits = new Map<number, number[]>();
  for (let i = 0; i < ops.length; i++) {
    if (ops.f[i] !== ACQUIRE || ops.key[i] < 0 || reentry.has(i)) continue;
    const list = waits.get(ops.key[i]);
    if (list) list.push(i);
    else waits.set(ops.key[i], [i]);
  }
  const out: Witness[] = [];
  for (const [k, list] of waits) {
    const held = (m.holdsByKey.get(m.keys.names[k])?.toArray() ?? []).map((h) => [ops.endOf(holds.acquire[h]), claimed[h]] as const);
    // The moments the key was held or granted, merged; waiting outside them is idle.
    held.sort((a, b) => a[0] - b[0]);
    const busy: [number, number][] = [];
    for (const [s, e] of held) {
      const last = busy[busy.length - 1];
      if (last && s <= last[1]) last[1] = Math.max(last[1], e);
      else busy.push([s, Math.max(s, e)]);
    }
    const waitEnd = (i: number): number => (ops.done[i] >= 0 ? ops.doneTime[i] : m.lastTime);
    const sorted = [...list].sort((a, b) => ops.start[a] - ops.start[b]);
    // Stretches where someone waited, merged.
    const waited: { from: number; to: number; who: number[] }[] = [];
    for (const i of sorted) {
      const last = waited[waited.length - 1];
      if (last && ops.start[i] <= last.to) {
        last.to = Math.max(last.to, waitEnd(i));
        last.who.push(i);
      } else waited.push({ from: ops.start[i], to: waitEnd(i), who: [i] });
    }
    // Both lists are sorted and disjoint: one pass over each.
    let b = 0;
    for (const w of waited) {
      while (b < busy.length && busy[b][1] <= w.from) b++;
      // The idle parts of the waited stretch: between the busy stretches.
      let from = w.from;
      for (let j = b; ; j++) {
        const [s, e] = j < busy.length && busy[j][0] < w.to ? busy[j] : [w.to, w.to];
        if (s - from > threshold) out.push(witness(m, k, from, s, w.who.filter((i) => ops.start[i] < s && waitEnd(i) > from), thresholdMs));
        from = Math.max(from, e);
        if (s >= w.to) break;
      }
    }
  }
  return out;
}

function witness(m: Paired, k: number, from: number, to: number, who: number[], thresholdMs: number): Witness {
  const ops = m.ops;
  const key = m.keys.names[k];
  const behind = [...new Set(who.map((i) => m.kind?.behind.get(i)).filter((b): b is string => b !== undefined))];
  const failed = who.filter((i) => ops.outcome[i] === FAIL).length;
  return {
    key,
    ...(behind.length ? { behind } : {}),
    events: eventsOf(m, ...who.slice(0, QUOTED)),
    explanation:
      `On key ${JSON.stringify(key)} ${who.length} acquire${who.length === 1 ? " was" : "s were"} waiting from ${ms(from)} to ${ms(to)} ` +
      `(${((to - from) / 1e6).toFixed(0)} ms, more than the ${thresholdMs} ms a dead holder's lease and a command take), and nobody held the key or was granted it: ` +
      `${who.slice(0, QUOTED).map((i) => quoteOp(m, i)).join("; ")}${who.length > QUOTED ? `; and ${who.length - QUOTED} more` : ""}. ` +
      (behind.length ? `They waited behind ${behind.map((b) => JSON.stringify(b)).join(", ")}, an entry nobody held. ` : ``) +
      `${failed > 0 ? `${failed} gave up. ` : ``}The lock was free and not granted: its queue stalled.`,
  };
}
