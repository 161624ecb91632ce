// How a witness quotes what it rests on: each operation once, with its event
// indexes, times in ms, process and the fields that matter, so that a reader can
// find every step of the argument in history.ndjson or resource.ndjson.
import type { ResourceDecision } from "../store/events.ts";
import type { Hold, Op, Write } from "./model.ts";

export const ms = (ns: number): string => `${(ns / 1e6).toFixed(3)} ms`;

const show = (v: unknown): string => (v === undefined ? "nothing" : JSON.stringify(v));

/** `write #12 (process 3, owner "c3-7", fence 5) invoked at 12.000 ms, ok #14 at 13.500 ms` */
export function quoteOp(op: Op, details = ""): string {
  const what = `${op.f} #${op.invoke.index} (process ${op.process}${details ? `, ${details}` : ""}) invoked at ${ms(op.start)}`;
  if (!op.done) return `${what}, never completed`;
  const err = op.done.error ? ` ${op.done.error}` : "";
  return `${what}, ${op.done.type}${err} #${op.done.index} at ${ms(op.done.time)}`;
}

export const fenceText = (fence: number | null): string => (fence === null ? "no fence" : `fence ${fence}`);

export const quoteWrite = (w: Write): string => quoteOp(w, `owner ${show(w.owner)}, ${fenceText(w.fence)}, data ${show(w.data)}`);

export const quoteAcquire = (h: Hold): string => quoteOp(h.acquire, `owner ${show(h.owner)}, ${fenceText(h.fence)}`);

/** `seq 7 (write by process 3, owner "c3-7", fence 5, data 6, accepted at 13.000 ms)` */
export function quoteDecision(d: ResourceDecision): string {
  const data = d.op === "write" ? `, data ${show(d.data)}` : "";
  return `seq ${d.seq} (${d.op} by process ${d.process}, owner ${show(d.owner)}, ${fenceText(d.fence)}${data}, ${d.accepted ? "accepted" : "refused"} at ${ms(d.time)})`;
}

export const quoted = show;
