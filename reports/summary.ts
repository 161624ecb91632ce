// The few lines printed when a run ends: the verdict first, because that is what the
// reader came for, then why (each anomaly type with its first witness), then the
// figures that say whether the run exercised anything (throughput, latency, writes,
// faults). Figures missing from `stats` print as "n/a" rather than failing.
import type { HistoryHeader, Results } from "../store/events.ts";
import { fairnessLine } from "./fairness.ts";
import { faultKind } from "./faults.ts";
import { millis, plain } from "./format.ts";
import { anomalyGroups, protocolErrorsLine, readFigures, verdictOf, type Verdict } from "./results.ts";

type Paint = (code: string, text: string) => string;

const ANSI = { red: "31", green: "32", yellow: "33", bold: "1", dim: "2" } as const;
const VERDICT_COLOUR: Record<Verdict, string> = { VALID: ANSI.green, INVALID: ANSI.red, UNKNOWN: ANSI.yellow };

function painter(colour?: boolean): Paint {
  // Colour only for a person at a terminal; logs, pipes and the API get plain text.
  const on = colour ?? (process.stdout.isTTY === true && !process.env.NO_COLOR);
  return on ? (code, text) => `\u001b[${code}m${text}\u001b[0m` : (_code, text) => text;
}

const na = "n/a";

export function renderSummary(input: { header: HistoryHeader; results: Results; colour?: boolean }): string {
  const { header, results } = input;
  const paint = painter(input.colour);
  const verdict = verdictOf(results);
  const fencing = header.fencing === true ? "on" : header.fencing === false ? "off" : "unknown";
  const lines: string[] = [];
  lines.push(`${paint(`${ANSI.bold};${VERDICT_COLOUR[verdict]}`, verdict)}  ${plain(header.workload)} on ${plain(header.backend)}, fencing ${fencing}` +
    paint(ANSI.dim, `  (run ${plain(header.run)})`));

  // The checker keeps at most MAX_WITNESSES witnesses a type; stats.anomaly_counts has how many it found.
  const counts = results.stats?.anomaly_counts as Record<string, unknown> | undefined;
  for (const group of anomalyGroups(results)) {
    const counted = counts?.[group.type];
    const n = typeof counted === "number" ? counted : group.witnesses.length;
    const kept = n > group.witnesses.length ? ` (${group.witnesses.length} witnesses kept)` : "";
    const first = group.witnesses[0];
    lines.push(`  ${paint(ANSI.red, plain(group.type))} ×${n}${kept}${first ? `: ${plain(first.explanation)}` : ""}`);
  }
  // Where clocks may be off: what only some placement of the instants shows, apart; it decides nothing.
  for (const [type, ws] of Object.entries(results.possible?.anomalies ?? {})) {
    const n = results.possible?.anomaly_counts[type] ?? ws.length;
    lines.push(`  ${paint(ANSI.yellow, `possible ${plain(type)}`)} ×${n} (only if the clocks were off the right way)${ws[0] ? `: ${plain(ws[0].explanation)}` : ""}`);
  }
  // Beside the anomalies: with none, it is why the run is not VALID.
  const broke = protocolErrorsLine(results);
  if (broke) lines.push(`  ${paint(ANSI.yellow, "protocol errors")}: ${broke}`);

  const f = readFigures(results.stats);
  const span = f.duration_s !== undefined ? ` over ${f.duration_s.toFixed(1)} s` : "";
  const events = f.events !== undefined ? ` (${f.events} events)` : "";
  lines.push(`  ops/s: ${f.ops_per_s !== undefined ? f.ops_per_s.toFixed(1) : na}${span}${events}`);

  const lat = f.acquire_latency_ms;
  lines.push(`  acquire latency: ${lat === undefined ? na : lat === null ? "no acquire succeeded"
    : `p50 ${millis(lat.p50)}, p99 ${millis(lat.p99)}, max ${millis(lat.max)}`}`);

  const acquires = f.ops?.acquire;
  if (acquires) lines.push(`  acquires: ${acquires.ok} ok, ${acquires.fail} failed, ${acquires.info} unknown`);
  const fairness = acquires ? fairnessLine(results.stats) : null;
  if (fairness) lines.push(`  ${fairness}`);

  lines.push(`  writes: ${f.writes_accepted ?? na} accepted, ${f.stale_writes_refused ?? na} stale refused`);
  lines.push(`  lease overlaps: ${f.lease_overlaps ?? na}`);
  const told = lostHoldsLine(results.stats?.lost_holds);
  if (told) lines.push(`  ${told}`);
  const cancels = cancelsLine(results.stats?.cancels);
  if (cancels) lines.push(`  ${cancels}`);
  const live = livenessLine(results.liveness);
  if (live) lines.push(`  ${live}`);

  const faults = f.faults === undefined ? na
    : Object.entries(f.faults).map(([kind, n]) => `${plain(faultKind(kind))} ×${n}`).join(", ") || "none";
  lines.push(`  faults: ${faults}`);
  return lines.join("\n");
}

/** Format 2's liveness findings (stuck-lock), in a line; null when the run has no liveness object. */
export function livenessLine(v: Results["liveness"]): string | null {
  if (!v) return null;
  const found = Object.entries(v.findings).filter(([, ws]) => ws.length > 0);
  if (found.length === 0) return "liveness: no stuck lock";
  const types = found.map(([type, ws]) => `${plain(type)} ×${ws.length}`).join(", ");
  // Counted, it is among the anomalies above, with its witness.
  if (v.strict) return `liveness: ${types}, counted (--liveness strict): listed with the anomalies above`;
  return `liveness: ${types}, not counted (--liveness strict would): ${plain(found[0][1][0].explanation)}`;
}

/** Withdrawn waits (--cancel-rate, stats.cancels): how many acquires failed "cancelled" or ended "cancel-unknown"; null when none did. */
function cancelsLine(v: unknown): string | null {
  const c = v as { cancelled?: number; unknown?: number } | undefined;
  const cancelled = c?.cancelled ?? 0, unknown = c?.unknown ?? 0;
  return cancelled + unknown > 0 ? `withdrawn waits: ${cancelled} cancelled (the waiter certainly removed), ${unknown} cancel-unknown` : null;
}

/** Whether the lock library told its user of the holds it lost (format 2 runs: stats.lost_holds), in a line; null when the run has none. */
export function lostHoldsLine(v: unknown): string | null {
  const l = v as { holds?: unknown; told?: unknown; told_after_ms?: { p50: number; max: number } | null } | undefined;
  if (typeof l?.holds !== "number" || typeof l.told !== "number") return null;
  if (l.holds === 0) return "lost holds: none (no hold was certainly lost while held)";
  const after = l.told_after_ms ? `, told p50 ${millis(l.told_after_ms.p50)} after the loss was certain (max ${millis(l.told_after_ms.max)})` : "";
  return `lost holds: ${l.holds}, the library told its user of ${l.told}${after}`;
}
