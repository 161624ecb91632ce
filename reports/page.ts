// The report page: verdict and figures first, then the anomalies with their
// witnesses, then the pictures that put them in context (timeline, acquire latency,
// fault list). One self-contained HTML string; every value taken from the run's files
// passes through `esc`.
import { aimSentence, faultKind, type FaultWindow } from "./faults.ts";
import type { Results } from "../store/events.ts";
import { esc, json, millis, seconds } from "./format.ts";
import { renderFairness } from "./fairness.ts";
import { renderLatency } from "./latency.ts";
import { pageData, type PageData, type ReportInput } from "./page-data.ts";
import { protocolErrorsLine, readFigures, verdictOf } from "./results.ts";
import { CSS, SCRIPT } from "./style.ts";
import { renderTimeline, type KindMark } from "./timeline.ts";
import { processMapNote } from "./lane-workers.ts";
import { renderAnomalies } from "./witnesses.ts";

export function renderReportHtml(input: ReportInput): string {
  const m = pageData(input);
  const { header } = input;
  const verdict = verdictOf(input.results);
  const timeline = renderTimeline(m);
  const latency = renderLatency(m);
  const fencing = header.fencing === true ? "on" : header.fencing === false ? "off" : "unknown";
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(verdict)} · ${esc(header.workload)} on ${esc(header.backend)} · ${esc(header.run)}</title>
<style>${CSS}</style></head>
<body><main>
<h1><span class="verdict ${verdict}">${verdict}</span>${esc(header.workload)} on ${esc(header.backend)}, fencing ${fencing}</h1>
<div class="run">run <code>${esc(header.run)}</code>${headerExtras(header)}</div>
${figures(m.input.results)}
<h2 id="anomalies">Anomalies</h2>
${renderAnomalies(m)}
<h2 id="timeline">Timeline</h2>
${mapNote(m)}
${timelineLegend(timeline.keys, timeline.kinds)}
${timeline.notes.map((n) => `<p class="note">${esc(n)}</p>`).join("")}
<div class="scroll">${timeline.svg}</div>
<h2 id="latency">Acquire latency</h2>
${latency.count === 0 ? `<p class="note">No acquire in this history.</p>` : `${latencyLegend()}
${latency.notes.map((n) => `<p class="note">${esc(n)}</p>`).join("")}
<div class="scroll">${latency.svg}</div>`}
<h2 id="fairness">Fairness</h2>
${renderFairness(m)}
<h2 id="faults">Faults</h2>
${faultTable(m.windows)}
${historyNotes(m)}
</main><script>${SCRIPT}</script></body></html>
`;
}

/** Said once above the timeline of a run whose lanes cannot be matched to workers. */
export function mapNote(m: PageData): string {
  const note = processMapNote(m);
  return note === null ? "" : `<p class="note map-note">${esc(note)}</p>`;
}

export function headerExtras(header: ReportInput["header"]): string {
  const known = new Set(["format", "kind", "run", "workload", "backend", "fencing"]);
  const extras = Object.entries(header).filter(([k]) => !known.has(k));
  if (extras.length === 0) return "";
  return ` · ${extras.map(([k, v]) => `${esc(k)} <code>${esc(json(v, 120))}</code>`).join(" · ")}`;
}

function figure(value: string, label: string): string {
  return `<div class="figure"><b>${value}</b><span>${label}</span></div>`;
}

export function figures(results: Results): string {
  const f = readFigures(results.stats);
  const na = "—";
  const lat = f.acquire_latency_ms;
  const cards: string[] = [
    figure(f.ops_per_s !== undefined ? f.ops_per_s.toFixed(1) : na, "operations per second"),
    figure(f.duration_s !== undefined ? `${f.duration_s.toFixed(1)} s` : na, `run length${f.events !== undefined ? `, ${f.events} events` : ""}`),
    figure(lat ? millis(lat.p50) : na, "acquire latency p50"),
    figure(lat ? millis(lat.p99) : na, "acquire latency p99"),
    figure(lat ? millis(lat.max) : na, "acquire latency max"),
    figure(f.writes_accepted !== undefined ? String(f.writes_accepted) : na, "writes accepted"),
    figure(f.stale_writes_refused !== undefined ? String(f.stale_writes_refused) : na, "stale writes refused"),
    figure(f.lease_overlaps !== undefined ? String(f.lease_overlaps) : na, "lease overlaps (expired leases, not anomalies)"),
    figure(f.faults === undefined ? na : esc(Object.entries(f.faults).map(([k, n]) => `${faultKind(k)} ×${n}`).join(", ") || "none"), "faults injected"),
  ];
  const withdrawn = cancelsFigure(results.stats?.cancels);
  if (withdrawn) cards.push(withdrawn);
  const ops = f.ops && Object.keys(f.ops).length
    ? `<table class="ops"><thead><tr><th>operation</th><th>ok</th><th>fail</th><th>info</th></tr></thead><tbody>${Object.entries(f.ops)
      .map(([name, c]) => `<tr><td>${esc(name)}</td><td>${c.ok}</td><td>${c.fail}</td><td>${c.info}</td></tr>`).join("")}</tbody></table>`
    : "";
  const missing = Object.keys(f).length === 0 ? `<p class="note">results.json has no figures this report can read.</p>` : "";
  const broke = protocolErrorsLine(results);
  const protocol = broke ? `<p class="note protocol-errors">Adapter protocol errors: ${esc(broke)}.</p>` : "";
  return `<div class="figures">${cards.join("")}</div>${protocol}${ops}${missing}`;
}

/** Withdrawn waits (format 2's stats.cancels), only when the run withdrew any. */
function cancelsFigure(v: unknown): string | null {
  if (typeof v !== "object" || v === null) return null;
  const { cancelled, unknown } = v as Record<string, unknown>;
  const c = typeof cancelled === "number" ? cancelled : 0, u = typeof unknown === "number" ? unknown : 0;
  return c + u > 0 ? figure(`${c} + ${u}`, "acquires withdrawn: cancelled + cancel-unknown") : null;
}

const swatch = (inner: string, label: string) => `<span><svg width="24" height="14">${inner}</svg>${label}</span>`;

/** Legend entries of the lock kinds' marks, only for those the timeline drew. */
const KIND_LEGEND: Record<KindMark, string> = {
  read: swatch(`<rect class="hold read" x="1" y="3" width="22" height="8"/>`, "read hold (R): readers share"),
  write: swatch(`<rect class="hold write" x="1" y="3" width="22" height="8"/>`, "write hold (W): excludes all"),
  entry: swatch(`<rect class="hold" x="1" y="2" width="22" height="10"/><rect class="entry" x="8" y="4.5" width="15" height="5"/>`, "re-entry, nested in its hold, labelled with its depth"),
  cancelled: swatch(`<path class="op-cancel" d="M9 4l6 6m0 -6l-6 6"/>`, "acquire withdrawn (cancelled)"),
  "cancel-unknown": swatch(`<path class="op-cancel-unknown" d="M9 4l6 6m0 -6l-6 6"/>`, "acquire withdrawn, removal unknown (cancel-unknown)"),
  levels: swatch(`<path class="lvl-certain" d="M1 11H8V5H16V11H23"/><line class="lvl-permits" x1="1" x2="23" y1="7" y2="7"/>`, "semaphore: holds certainly valid at once, dashed at the permits, red above them"),
  "lane-fault": swatch(`<rect class="lane-fault fault-pause" x="1" y="2" width="22" height="10"/>`, "fault on the lane's worker or its links: it hit that process"),
};

export function timelineLegend(keys: string[], kinds: ReadonlySet<KindMark> = new Set()): string {
  const items = [
    swatch(`<rect class="hold" x="1" y="3" width="22" height="8"/>`, "hold (acquire ok → release done)"),
    swatch(`<rect class="ext" x="1" y="3" width="22" height="8"/>`, "held after the lease was certainly over"),
    swatch(`<line class="w-ok" x1="12" x2="12" y1="1" y2="13"/>`, "write accepted"),
    swatch(`<line class="w-stale" x1="12" x2="12" y1="1" y2="13"/>`, "write refused: stale fence"),
    swatch(`<line class="w-fail" x1="12" x2="12" y1="1" y2="13"/>`, "write failed otherwise"),
    swatch(`<line class="w-info" x1="12" x2="12" y1="1" y2="13"/>`, "write outcome unknown"),
    swatch(`<circle class="op-fail" cx="12" cy="7" r="4"/>`, "other op failed (or release found the lock gone)"),
    swatch(`<circle class="op-info" cx="12" cy="7" r="4"/>`, "other op unknown (info)"),
    swatch(`<line class="span" x1="1" x2="23" y1="7" y2="7"/>`, "operation in flight"),
    swatch(`<rect class="fault-pause" x="1" y="1" width="22" height="12"/>`, "fault window"),
    swatch(`<g class="witness"><rect class="ring" x="2" y="2" width="20" height="10"/></g>`, "witness (click to go to its entry)"),
  ];
  for (const k of Object.keys(KIND_LEGEND) as KindMark[]) if (kinds.has(k)) items.push(KIND_LEGEND[k]);
  keys.forEach((k, i) => items.push(swatch(`<rect class="hold k${i}" x="1" y="3" width="22" height="8"/>`, `key <code>${esc(json(k, 60))}</code>`)));
  return `<div class="legend">${items.join("")}</div>`;
}

function latencyLegend(): string {
  return `<div class="legend">${[
    swatch(`<circle class="pt-ok" cx="12" cy="7" r="3"/>`, "acquired"),
    swatch(`<path class="pt-fail" d="M9 4l6 6m0 -6l-6 6"/>`, "failed"),
    swatch(`<path class="pt-info" d="M12 3l4 7h-8z"/>`, "unknown (latency so far)"),
    swatch(`<line class="pct" x1="1" x2="23" y1="7" y2="7"/>`, "p50 / p99 from results"),
  ].join("")}</div>`;
}

export function faultTable(windows: readonly FaultWindow[]): string {
  if (windows.length === 0) return `<p class="note">No nemesis events in this history.</p>`;
  // Runs from before faults were aimed, and scripted faults, record no aim: no column for them.
  const aimed = windows.some((w) => aimSentence(w.start?.value) !== null);
  const rows = windows.map((w) => `<tr><td>${esc(w.kind)}</td><td>${esc(w.targets.join(", "))}</td>` +
    `<td>${seconds(w.from)}${w.start ? ` (#${esc(w.start.index)})` : ""}</td>` +
    `<td>${w.from === w.to && w.start === w.stop ? "instant" : w.healed ? `${seconds(w.to)}${w.stop ? ` (#${esc(w.stop.index)})` : ""}` : "never healed"}</td>` +
    (aimed ? `<td>${esc(aimSentence(w.start?.value) ?? "")}</td>` : "") +
    `<td><code>${esc(json(w.start?.value ?? w.stop?.value, 300))}</code></td></tr>`);
  return `<table class="faults"><thead><tr><th>fault</th><th>targets</th><th>from</th><th>to</th>${aimed ? "<th>why there</th>" : ""}<th>parameters</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function historyNotes(m: PageData): string {
  const notes: string[] = [];
  notes.push(`${m.events.length} history events, ${m.ops.length} client operations, ${m.holds.length} holds` +
    (m.input.decisions ? `, ${m.decisions.length} resource decisions.` : "; no resource log."));
  if (m.orphans.length) {
    const first = m.orphans.slice(0, 5).map((e) => `#${e.index}`).join(", ");
    notes.push(`${m.orphans.length} completion event(s) match no open invoke of their process and f (${first}${m.orphans.length > 5 ? ", …" : ""}); they are not drawn.`);
  }
  return `<h2 id="history">History</h2>${notes.map((n) => `<p class="note">${esc(n)}</p>`).join("")}`;
}
