// How a witness quotes what it rests on: each operation once, with its event
// indexes, times in ms, process and the fields that matter, so that a reader can
// find every step of the argument in history.ndjson or resource.ndjson.
import type { Paired } from "./paired.ts";
import { resourceView } from "./resource.ts";
import { ACCEPTED, OUTCOMES, orNull, REFUSED, UNDECIDED } from "./table.ts";

export const ms = (ns: number): string => `${(ns / 1e6).toFixed(3)} ms`;

const show = (v: unknown): string => (v === undefined ? "nothing" : JSON.stringify(v));

export const fenceText = (fence: number | null): string => (fence === null ? "no fence" : `fence ${fence}`);

export const keyText = (m: Paired, key: number): string => JSON.stringify(m.keys.names[key]);
export const ownerOf = (m: Paired, owner: number): string | undefined => (owner < 0 ? undefined : m.owners.names[owner]);

/** `write #12 (process 3, owner "c3-7", fence 5) invoked at 12.000 ms, ok #14 at 13.500 ms` */
export function quoteOp(m: Paired, op: number, details = ""): string {
  const o = m.ops;
  const what = `${m.fs.names[o.f[op]]} #${o.invoke[op]} (process ${o.process[op]}${details ? `, ${details}` : ""}) invoked at ${ms(o.start[op])}`;
  if (o.done[op] < 0) return `${what}, never completed`;
  const error = o.error[op] < 0 ? "" : m.errors.names[o.error[op]];
  return `${what}, ${OUTCOMES[o.outcome[op]]}${error ? ` ${error}` : ""} #${o.done[op]} at ${ms(o.doneTime[op])}`;
}

export const quoteWrite = (m: Paired, w: number): string =>
  quoteOp(m, w, `owner ${show(ownerOf(m, m.ops.owner[w]))}, ${fenceText(orNull(m.ops.fence[w]))}, data ${show(m.ops.data[w])}`);

export const quoteAcquire = (m: Paired, h: number): string =>
  quoteOp(m, m.holds.acquire[h], `owner ${show(m.owners.names[m.holds.owner[h]])}, ${fenceText(orNull(m.holds.fence[h]))}`);

/**
 * `seq 7 (write by process 3, owner "c3-7", fence 5, data 6, accepted at 13.000 ms,
 * sent by write #12)`: the history's write or read that sent it is named when it is known.
 */
/** Decisions.accepted in words. */
const OUTCOME_WORDS = { [REFUSED]: "refused", [ACCEPTED]: "accepted", [UNDECIDED]: "of unknown outcome (its store was lost during the commit)" } as Record<number, string>;

export function quoteDecision(m: Paired, d: number): string {
  const ds = m.decisions!;
  const write = ds.write[d] === 1;
  const data = write ? `, data ${show(ds.data[d])}` : ds.accepted[d] === ACCEPTED ? `, returned ${show(ds.data[d])}` : "";
  const sent = resourceView(m)?.eventsOf(d) ?? [];
  const op = write ? "write" : "read";
  return `seq ${ds.seq[d]} (${op} by process ${ds.process[d]}, owner ${show(m.owners.names[ds.owner[d]])}, ` +
    `${fenceText(orNull(ds.fence[d]))}${data}, ${OUTCOME_WORDS[ds.accepted[d]]} at ${ms(ds.time[d])}` +
    `${sent.length > 0 ? `, sent by ${op} #${sent[0]}` : ""})`;
}

export const quoted = show;
