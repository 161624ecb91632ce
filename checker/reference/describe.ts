// Words for witnesses: operations quoted by their event numbers, process, owner,
// fence and times in ms on the run's clock, and decisions by seq, as
// docs/history-format.md "Witnesses" asks. Decides nothing.
import type { Decision, Hold, Op, Span } from "./types.ts";

export const ms = (ns: number): string => (Number.isFinite(ns) ? `${(ns / 1e6).toFixed(3)} ms` : "the end of the run");

const fenceText = (f: unknown): string => (f === null || f === undefined ? "no fence" : `fence ${f}`);

/** `write #4 (process 0, owner "a", fence 1, data 2) invoked at 1.000 ms, ok #5 at 2.000 ms` */
export function opText(op: Op, extra: { owner?: string; fence?: unknown; data?: boolean } = {}): string {
  const owner = extra.owner ?? (op.iv.owner as string | undefined) ?? (op.ov.owner as string | undefined);
  const fence = "fence" in extra ? extra.fence : op.iv.fence ?? op.ov.fence;
  const parts = [`process ${op.process}`];
  if (owner !== undefined) parts.push(`owner ${JSON.stringify(owner)}`);
  if (op.f !== "release" && op.f !== "renew") parts.push(fenceText(fence));
  if (extra.data) parts.push(`data ${JSON.stringify(op.iv.data)}`);
  const done = op.done
    ? `, ${op.outcome}${op.error ? ` ${op.error}` : ""} #${op.done.index} at ${ms(op.done.time)}`
    : ", never completed";
  return `${op.f} #${op.invoke.index} (${parts.join(", ")}) invoked at ${ms(op.invoke.time)}${done}`;
}

export function holdText(h: Hold): string {
  return `${opText(h.acquire, { owner: h.owner, fence: h.fence })}${validText(h)}`;
}

export function validText(h: Hold): string {
  if (h.spans.length === 0) return ", never certainly valid";
  return `, certainly valid ${h.spans.map(spanText).join(" and ")}`;
}

export const spanText = (s: Span): string => `from ${ms(s.start)} until ${ms(s.end)} (${s.endWhy})`;

export function decisionText(d: Decision): string {
  const verb = d.accepted === true ? "accepted" : d.accepted === false ? "refused" : "decided with unknown outcome";
  const sent = d.sentBy ? `, sent by ${d.sentBy.f} #${d.sentBy.invoke.index}` : "";
  return `seq ${d.seq} (${d.op} by process ${d.process}, owner ${JSON.stringify(d.owner)}, ${fenceText(d.fence)}, data ${JSON.stringify(d.data)}, ${verb} at ${ms(d.time)}${sent})`;
}

/** The history events an operation's witness rests on: its invoke and completion. */
export const opEvents = (...ops: Array<Op | null | undefined>): number[] => {
  const out: number[] = [];
  for (const op of ops) {
    if (!op) continue;
    out.push(op.invoke.index);
    if (op.done) out.push(op.done.index);
  }
  return [...new Set(out)].sort((a, b) => a - b);
};
