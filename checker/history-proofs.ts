// The log can only add to what the history proves (docs/anomalies.md, what the
// resource accepted). With a resource log, each rule of the writes reports the
// log's witnesses and, beside them, every witness the history alone gives whose
// subject no witness of the log's has: the write it judges, or for
// interleaved-writers its pair of holds. A line of unknown outcome for a write the
// history shows ok, or a log whose order real time forbids, once hid a stale
// write the history alone proved, and the run came out VALID.
import type { Witness } from "../store/events.ts";
import type { Paired } from "./paired.ts";
import { resourceView } from "./resource.ts";

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
  const told = new Set(log.map((w) => subjects.get(w)));
  const more = fromHistory().filter((w) => {
    const s = subjects.get(w);
    return s === undefined || !told.has(s);
  });
  return more.length > 0 ? [...log, ...more] : log;
}
