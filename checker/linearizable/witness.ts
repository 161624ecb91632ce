// The model check's witnesses for the fenced mutex (Knossos's kind): the operation
// the search could not get past, in the furthest order it found, and why the
// mutex refuses it there; and what they share with the counted models' (counted-witness.ts).
import type { Witness } from "../../store/events.ts";
import { ms, quoteAcquire, quoteOp } from "../explain.ts";
import { eventsOf, RENEW as RENEW_F, type Paired } from "../paired.ts";
import { OK, OUTCOMES } from "../table.ts";
import { ACQUIRE, NOT_RELEASED, RELEASE_OK, type mutexModel, type MutexHistory } from "./fenced-mutex.ts";
import type { Deepest } from "./wgl.ts";

/**
 * Knossos's kind of witness: the operation the search could not get past, in the
 * furthest order it found, and why the mutex refuses it there: who held the lock
 * then and why that hold had not ended by the operation's completion.
 */
export function mutexWitness(m: Paired, h: MutexHistory, model: ReturnType<typeof mutexModel>, deepest: Deepest): Witness {
  const o = m.ops;
  const holder = model.holder(deepest.state);
  const fenced = model.fenced(deepest.state);
  const b = deepest.blocked;
  const row = (i: number): number => h.row[i];
  const acquireRow = (j: number): number => m.holds.acquire[h.holds[j]];
  const quote = (i: number): string => (h.kind[i] === ACQUIRE ? quoteAcquire(m, h.holds[h.hold[i]]) : quoteOp(m, row(i), `owner ${JSON.stringify(m.owners.names[m.holds.owner[h.holds[h.hold[i]]]])}`));
  const j = h.hold[b];
  const until = `by its ${OUTCOMES[o.outcome[row(b)]]} at ${ms(o.doneTime[row(b)])}`;
  const related: number[] = [row(b)];
  let why: string;
  if (h.kind[b] === ACQUIRE && holder >= 0) {
    related.push(acquireRow(holder));
    const rel = releasesOf(h, holder);
    related.push(...rel.map(row));
    const ended = rel.length === 0 ? "and no release of that hold ended it"
      : `and that hold's release #${o.invoke[row(rel[0])]} was invoked only at ${ms(o.start[row(rel[0])])}${h.ret[rel[0]] < 0 ? " (its outcome unknown)" : ""}`;
    why = `the lock was held by the hold of ${quoteAcquire(m, h.holds[holder])}, ${ended}${leaseNote(m, h.holds[holder], o.doneTime[row(b)])}`;
  } else if (h.kind[b] === ACQUIRE) {
    related.push(acquireRow(fenced));
    why = `its fence ${h.fences[j]} is not above fence ${h.fences[fenced]}, granted before it by ${quoteAcquire(m, h.holds[fenced])}`;
  } else if (h.kind[b] === NOT_RELEASED) {
    related.push(acquireRow(j));
    why = `it answered that the lock was no longer its hold's, yet no other acquire can have taken the lock from that hold (${quoteAcquire(m, h.holds[j])})`;
  } else {
    related.push(acquireRow(j));
    if (holder >= 0) related.push(acquireRow(holder));
    why = `its hold no longer held the lock: ${holder >= 0 ? `the hold of ${quoteAcquire(m, h.holds[holder])} did` : "it was free"}`;
  }
  const last = deepest.last;
  const context = last >= 0 && row(last) !== related[1]
    ? ` (the last operation to take effect before it was ${quoteOp(m, row(last))})`
    : "";
  if (last >= 0) related.push(row(last));
  return {
    key: h.key,
    events: eventsOf(m, ...related),
    explanation:
      `On key ${JSON.stringify(h.key)} no order of the acquires, renews and releases that respects real time is one a mutex allows. ` +
      `${capital(quote(b))} must have taken effect ${until}, but in the furthest such order the search found, ` +
      `${deepest.taken} of ${h.length} operations in${context}, ${why}. ` +
      `A mutex grants no lock that is held; a lease service does once the lease runs out, so only --model strict counts this.`,
  };
}

export function releasesOf(h: MutexHistory, j: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < h.length; i++) if (h.hold[i] === j && (h.kind[i] === RELEASE_OK || h.kind[i] === NOT_RELEASED)) out.push(i);
  return out;
}

/** Whether the hold's lease (from its acquire or last ok renew, both invoked) had run out by `at`. */
export function leaseNote(m: Paired, hold: number, at: number): string {
  const o = m.ops;
  let from = o.start[m.holds.acquire[hold]];
  let ttl = m.holds.ttl[hold];
  for (let r = m.holds.first[hold]; r >= 0; r = o.next[r]) {
    if (o.f[r] === RENEW_F && o.outcome[r] === OK && o.start[r] >= from) {
      from = o.start[r];
      ttl = o.ttl[r];
    }
  }
  if (Number.isNaN(ttl)) return "";
  const end = from + ttl * 1e6;
  return end < at ? `; its lease of ${ttl} ms from ${ms(from)} had run out at ${ms(end)}` : `; its lease of ${ttl} ms from ${ms(from)} still ran until ${ms(end)}`;
}

export const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
