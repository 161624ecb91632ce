// Tooltip and table text for events, operations, holds and resource decisions. Plain
// strings; the caller escapes them for wherever they go.
import { outcomeWord, type HistoryEvent, type ResourceDecision } from "../store/events.ts";
import { json, millis, seconds } from "./format.ts";
import type { Hold, Op, Reentry } from "./ops.ts";

export function describeEvent(e: HistoryEvent): string {
  const who = typeof e.process === "number" ? `p${e.process}` : String(e.process);
  const parts = [`#${e.index}`, seconds(e.time), who, e.type, e.f];
  if (e.key !== undefined) parts.push(`key=${json(e.key, 80)}`);
  if (e.value !== undefined) parts.push(json(e.value, 200));
  if (e.error !== undefined) parts.push(`error=${json(e.error, 80)}`);
  return parts.join(" ");
}

export function describeDecision(d: ResourceDecision): string {
  return `resource seq ${d.seq} at ${seconds(d.time)}: ${d.op} by p${d.process} owner=${json(d.owner, 80)}` +
    ` key=${json(d.key, 80)} fence=${d.fence ?? "null"} max_before=${d.max_before ?? "null"}` +
    ` ${outcomeWord(d)}${d.fencing ? "" : " (fencing off)"} data=${json(d.data, 120)}`;
}

/** `brief`: one line, for pages with so many marks that full tooltips would bloat them. */
export function describeOp(op: Op, decision?: ResourceDecision, brief = false): string {
  const c = op.completion;
  if (brief) {
    return `${op.f} ${op.outcome}${c?.error ? ` (${c.error})` : ""} p${op.process} #${op.invoke.index}→${c ? `#${c.index}` : "open"}` +
      ` ${seconds(op.invoke.time)}${c ? ` +${millis((c.time - op.invoke.time) / 1e6)}` : ""}` +
      `${op.fence !== undefined ? ` fence ${op.fence}` : ""}${decision ? ` seq ${decision.seq} ${outcomeWord(decision)}` : ""}`;
  }
  const lines = [`${op.f} ${op.outcome}${c?.error ? ` (${c.error})` : ""} — p${op.process}`];
  lines.push(describeEvent(op.invoke));
  if (c) lines.push(`${describeEvent(c)} — took ${millis((c.time - op.invoke.time) / 1e6)}`);
  else lines.push("never completed: counts as info");
  if (decision) lines.push(describeDecision(decision));
  return lines.join("\n");
}

/** "read hold (R)" / "write hold (W)" for an rw lock's, "hold" for any other. */
const holdNoun = (h: Hold): string => (h.mode === "read" ? "read hold (R)" : h.mode === "write" ? "write hold (W)" : "hold");

export function describeHold(h: Hold, end: number, brief = false): string {
  const ok = h.acquire.completion;
  const deepest = h.entries?.reduce((d, e) => Math.max(d, e.depth), 1) ?? 1;
  if (brief) {
    return `${holdNoun(h)} ${json(h.owner, 40)} fence ${h.fence ?? "null"} p${h.process} ${ok ? seconds(ok.time) : "?"} – ${seconds(end)}` +
      (h.leaseEnd === null ? "" : `, lease until ${seconds(h.leaseEnd)}`) + (deepest > 1 ? `, re-entered to depth ${deepest}` : "");
  }
  const lines = [
    `${holdNoun(h)} ${json(h.owner, 80)} on key ${json(h.key, 80)}, fence ${h.fence ?? "null"}, p${h.process}`,
    `acquired at ${ok ? seconds(ok.time) : "?"} (#${h.acquire.invoke.index} → #${ok?.index ?? "?"})`,
    h.leaseEnd === null ? "lease: no TTL known" : `lease certainly held until ${seconds(h.leaseEnd)}`,
  ];
  if (h.entries?.length) lines.push(`re-entered ${h.entries.length} time${h.entries.length === 1 ? "" : "s"}, to depth ${deepest} at most`);
  const r = h.release;
  if (!r) lines.push(`never released; drawn to ${seconds(end)}`);
  else if (!r.completion) lines.push(`release #${r.invoke.index} invoked at ${seconds(r.invoke.time)}, never completed`);
  else lines.push(`release #${r.completion.index} ${r.outcome} at ${seconds(r.completion.time)} ${json(r.completion.value)}`);
  const writes = h.ops.filter((o) => o.f === "write").length;
  if (writes) lines.push(`${writes} write${writes === 1 ? "" : "s"}`);
  return lines.join("\n");
}

/** A re-entry of a reentrant hold: its depth, its grant and the inner release that lowered the count. */
export function describeReentry(h: Hold, e: Reentry, brief = false): string {
  const ok = e.acquire.completion;
  const r = e.release;
  const released = !r ? "not released before the hold ended"
    : !r.completion ? `release #${r.invoke.index} invoked at ${seconds(r.invoke.time)}, never completed`
      : `released (depth ${e.depth}) by #${r.invoke.index} → #${r.completion.index} ${r.outcome}${r.completion.error ? ` (${r.completion.error})` : ""} at ${seconds(r.completion.time)}`;
  if (brief) return `re-entry depth ${e.depth} of ${json(h.owner, 40)} p${h.process} ${ok ? seconds(ok.time) : "?"}, ${released}`;
  return [
    `re-entry at depth ${e.depth} of hold ${json(h.owner, 80)} on key ${json(h.key, 80)}, p${h.process}`,
    `granted at ${ok ? seconds(ok.time) : "?"} (#${e.acquire.invoke.index} → #${ok?.index ?? "?"}), fence ${json(ok?.value?.fence ?? null)}`,
    released,
    "an inner release must lower the count and free nothing; the hold ends with its outermost release",
  ].join("\n");
}
