// Tooltip and table text for events, operations, holds and resource decisions. Plain
// strings; the caller escapes them for wherever they go.
import type { HistoryEvent, ResourceDecision } from "../store/events.ts";
import { json, millis, seconds } from "./format.ts";
import type { Hold, Op } from "./ops.ts";

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
    ` ${d.accepted ? "accepted" : "refused"}${d.fencing ? "" : " (fencing off)"} data=${json(d.data, 120)}`;
}

/** `brief`: one line, for pages with so many marks that full tooltips would bloat them. */
export function describeOp(op: Op, decision?: ResourceDecision, brief = false): string {
  const c = op.completion;
  if (brief) {
    return `${op.f} ${op.outcome}${c?.error ? ` (${c.error})` : ""} p${op.process} #${op.invoke.index}→${c ? `#${c.index}` : "open"}` +
      ` ${seconds(op.invoke.time)}${c ? ` +${millis((c.time - op.invoke.time) / 1e6)}` : ""}` +
      `${op.fence !== undefined ? ` fence ${op.fence}` : ""}${decision ? ` seq ${decision.seq} ${decision.accepted ? "accepted" : "refused"}` : ""}`;
  }
  const lines = [`${op.f} ${op.outcome}${c?.error ? ` (${c.error})` : ""} — p${op.process}`];
  lines.push(describeEvent(op.invoke));
  if (c) lines.push(`${describeEvent(c)} — took ${millis((c.time - op.invoke.time) / 1e6)}`);
  else lines.push("never completed: counts as info");
  if (decision) lines.push(describeDecision(decision));
  return lines.join("\n");
}

export function describeHold(h: Hold, end: number, brief = false): string {
  const ok = h.acquire.completion;
  if (brief) {
    return `hold ${json(h.owner, 40)} fence ${h.fence ?? "null"} p${h.process} ${ok ? seconds(ok.time) : "?"} – ${seconds(end)}` +
      (h.leaseEnd === null ? "" : `, lease until ${seconds(h.leaseEnd)}`);
  }
  const lines = [
    `hold ${json(h.owner, 80)} on key ${json(h.key, 80)}, fence ${h.fence ?? "null"}, p${h.process}`,
    `acquired at ${ok ? seconds(ok.time) : "?"} (#${h.acquire.invoke.index} → #${ok?.index ?? "?"})`,
    h.leaseEnd === null ? "lease: no TTL known" : `lease certainly held until ${seconds(h.leaseEnd)}`,
  ];
  const r = h.release;
  if (!r) lines.push(`never released; drawn to ${seconds(end)}`);
  else if (!r.completion) lines.push(`release #${r.invoke.index} invoked at ${seconds(r.invoke.time)}, never completed`);
  else lines.push(`release #${r.completion.index} ${r.outcome} at ${seconds(r.completion.time)} ${json(r.completion.value)}`);
  const writes = h.ops.filter((o) => o.f === "write").length;
  if (writes) lines.push(`${writes} write${writes === 1 ? "" : "s"}`);
  return lines.join("\n");
}
