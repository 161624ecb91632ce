// grant-after-cancel: an acquire completed `fail cancelled` (its client says the
// service certainly removed the waiter), yet the waiter's queue entry was still
// there afterwards: an acquire of the key invoked later waited behind it (its completion's
// `behind` names the entry's owner), or the service granted it (a hold with that
// owner). Either way the withdrawal did not take, and the witness names the
// acquire that waited behind the dead entry.
import { CANCELLED_ERROR, type Witness } from "../../store/events.ts";
import { quoteOp } from "../explain.ts";
import { ACQUIRE, eventsOf, type Paired } from "../paired.ts";
import { FAIL } from "../table.ts";

export function grantsAfterCancel(m: Paired): Witness[] {
  const facts = m.kind;
  if (!facts || facts.entry.size === 0) return [];
  const { ops } = m;
  const cancelled = m.errors.names.indexOf(CANCELLED_ERROR);
  if (cancelled < 0) return [];
  // The withdrawn entries by owner: the cancelled acquire, certain from its completion on.
  const withdrawn = new Map<string, number>();
  for (const [i, owner] of facts.entry) if (ops.f[i] === ACQUIRE && ops.outcome[i] === FAIL && ops.error[i] === cancelled) withdrawn.set(owner, i);
  if (withdrawn.size === 0) return [];
  const out: Witness[] = [];
  const key = (i: number): string => m.keys.names[ops.key[i]];
  for (const [j, behind] of facts.behind) {
    const c = withdrawn.get(behind);
    // Invoked after the withdrawal was answered, and still behind it: the entry
    // outlived a certain removal. (A waiter queued before may have been behind it
    // while it stood, and woken by its very delete.)
    if (c === undefined || ops.key[j] !== ops.key[c] || !(ops.start[j] > ops.doneTime[c])) continue;
    out.push({
      key: key(j),
      events: eventsOf(m, c, j),
      explanation:
        `On key ${JSON.stringify(key(j))} ${quoteOp(m, c, `entry ${JSON.stringify(behind)}`)} was withdrawn, the service certainly rid of its waiter; ` +
        `yet ${quoteOp(m, j)} waited behind that entry afterwards (its client says it waited behind ${JSON.stringify(behind)}).`,
    });
  }
  for (let h = 0; h < m.holds.length; h++) {
    const c = withdrawn.get(m.owners.names[m.holds.owner[h]]);
    if (c === undefined || m.holds.key[h] !== ops.key[c]) continue;
    const a = m.holds.acquire[h];
    out.push({
      key: key(a),
      events: eventsOf(m, c, a),
      explanation: `On key ${JSON.stringify(key(a))} ${quoteOp(m, c)} was withdrawn, the service certainly rid of its waiter; yet ${quoteOp(m, a)} was later granted as that very entry.`,
    });
  }
  return out;
}
