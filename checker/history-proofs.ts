// The log can only add to what the history proves (docs/anomalies.md, what the
// resource accepted). With a resource log, each rule of the writes reports the
// log's witnesses and, beside them, every witness the history alone gives whose
// subject no witness of the log's has: the write it judges, or for
// interleaved-writers its pair of holds. A line of unknown outcome for a write the
// history shows ok, or a log whose order real time forbids, once hid a stale
// write the history alone proved, and the run came out VALID.
import type { Witness } from "../store/events.ts";
import { WRITE, type Paired } from "./paired.ts";
import { resourceView, unmatchedWrites } from "./resource.ts";
import { FAIL, REFUSED, UNDECIDED } from "./table.ts";

const subjects = new WeakMap<Witness, string>();

/** `w`, marked as judging `subject` (the same string from the log's witness and the history's). */
export function about<T extends Witness | null>(w: T, subject: string): T {
  if (w) subjects.set(w, subject);
  return w;
}

/** The subject of a write: its invoke's event index, or, for a decision the history has no write for, its seq. */
export const writeSubject = (events: readonly number[], seq?: number): string => (events.length > 0 ? `op ${events[0]}` : `seq ${seq}`);

export function logThenHistory(m: Paired, fromLog: () => Witness[], fromHistory: () => Witness[]): Witness[] {
  if (!resourceView(m)) return fromHistory();
  const log = fromLog();
  // Clocks that may be off (clock.ts): the writes' times are the clocks' own, so the log alone speaks.
  if (m.clockPlaced) return log;
  if (logHoldsTheHistory(m)) return log;
  const told = new Set(log.map((w) => subjects.get(w)));
  const more = fromHistory().filter((w) => {
    const s = subjects.get(w);
    return s === undefined || !told.has(s);
  });
  return more.length > 0 ? [...log, ...more] : log;
}

const whole = new WeakMap<Paired, boolean>();

/**
 * Whether the log already shows all the history could prove, so that the
 * history's proofs (as costly as the log's, on a large run) can add nothing:
 * every decision's outcome known, every ok write matched by an accepted decision,
 * each key's decisions in the order they took effect stamped in time order, every
 * write's decision inside its own write's invoke and completion, and a refusal
 * logged for each write the history shows refused as stale.
 * Then a write that real time puts after another took effect after it in the log
 * too, and each rule of the log sees what the history's would.
 */
function logHoldsTheHistory(m: Paired): boolean {
  const known = whole.get(m);
  if (known !== undefined) return known;
  const answer = ((): boolean => {
    const ds = m.decisions!;
    const view = resourceView(m)!;
    if (unmatchedWrites(m) !== 0) return false;
    for (let d = 0; d < ds.length; d++) if (ds.accepted[d] === UNDECIDED) return false;
    for (const list of view.byKey.values()) {
      let t = -Infinity;
      for (let j = 0; j < list.length; j++) {
        const d = list.items[j];
        if (ds.time[d] < t) return false;
        t = ds.time[d];
      }
    }
    // Every write decision inside its own write, and as many refusals as the history's writes refused as stale.
    let refused = 0;
    for (let d = 0; d < ds.length; d++) {
      if (!ds.write[d]) continue;
      if (ds.accepted[d] === REFUSED) refused++;
      if (view.eventsOf(d).length === 0) return false;
    }
    const stale = m.errors.names.indexOf("stale-fence");
    let refusedInHistory = 0;
    const o = m.ops;
    if (stale >= 0) for (let i = 0; i < o.length; i++) if (o.f[i] === WRITE && o.outcome[i] === FAIL && o.error[i] === stale) refusedInHistory++;
    return refused === refusedInHistory;
  })();
  whole.set(m, answer);
  return answer;
}
