// The report page of a large run, drawn from the two streaming passes (digest.ts,
// windows.ts) instead of the whole history in memory. Same sections as page.ts;
// the difference is said at the top: the timeline is an overview per time bucket
// plus windows drawn in full around each witness and some faults, and the full
// data is in the run directory's files.
import type { HistoryEvent, HistoryHeader, ResourceDecision, Results } from "../store/events.ts";
import { RUN_FILES } from "../store/events.ts";
import type { ProcessMap } from "../store/process-map.ts";
import type { Digest } from "./digest.ts";
import { readFairness } from "./fairness.ts";
import type { FaultWindow } from "./faults.ts";
import { esc, millis, seconds } from "./format.ts";
import { pageData, type PageData } from "./page-data.ts";
import type { Op } from "./ops.ts";
import { renderLatencyOverview, renderOpsOverview, OVERVIEW_CSS } from "./overview.ts";
import { faultTable, figures, headerExtras, mapNote, timelineLegend } from "./page.ts";
import { readFigures, verdictOf, type AnomalyGroup } from "./results.ts";
import { CSS, SCRIPT } from "./style.ts";
import { renderTimeline, type KindMark } from "./timeline.ts";
import type { WindowPlan } from "./windows.ts";
import { renderAnomalies } from "./witnesses.ts";

export interface DigestInput {
  header: HistoryHeader;
  results: Results;
  digest: Digest;
  faults: FaultWindow[];
  groups: AnomalyGroup[];
  plan: WindowPlan;
  /** run.json's `processes` (null or absent: the run did not record it). */
  processes?: ProcessMap | null;
}

/** Each window as a model of its own, showing only the witnesses it is home to. */
function windowModels(input: DigestInput): PageData[] {
  return input.plan.windows.map((w) => {
    const m = pageData({ header: input.header, events: w.events, decisions: input.digest.decisions === null ? null : w.decisions, results: input.results, processes: input.processes });
    m.groups = input.groups.map((g, gi) => ({
      type: g.type,
      witnesses: g.witnesses.map((v, wi) => (w.witnesses.has(`${gi}-${wi}`) ? v : { ...v, events: [], seqs: [] })),
    }));
    m.windows = input.faults.filter((f) => f.to >= w.from && f.from <= w.to);
    m.t0 = w.from;
    m.t1 = w.to;
    return m;
  });
}

/** What the anomaly list looks up (events, their operations, decisions), from every window. */
function unionModel(input: DigestInput, models: readonly PageData[]): PageData {
  const eventAt = new Map<number, HistoryEvent>();
  const opOfEvent = new Map<number, Op>();
  const decisionAt = new Map<number, ResourceDecision>();
  for (const m of models) {
    for (const [k, v] of m.eventAt) if (!eventAt.has(k)) eventAt.set(k, v);
    for (const [k, v] of m.opOfEvent) if (!opOfEvent.has(k)) opOfEvent.set(k, v);
    for (const [k, v] of m.decisionAt) if (!decisionAt.has(k)) decisionAt.set(k, v);
  }
  const base = pageData({ header: input.header, events: [], decisions: input.digest.decisions === null ? null : [], results: input.results, processes: input.processes });
  return { ...base, groups: input.groups, eventAt, opOfEvent, decisionAt };
}

function notice(input: DigestInput): string {
  const { digest: d, plan } = input;
  const witnesses = input.groups.reduce((n, g) => n + g.witnesses.length, 0);
  const parts = [
    `This report is downsampled: the history has ${d.events} events, too many to draw one by one.`,
    `The timeline below is an overview in ${millis(d.buckets.width / 1e6)} buckets of run time (operations per bucket by f and outcome; acquire latency p50, p99 and max per bucket, the quantiles to within 6 %),`,
    `followed by ${plan.windows.length} window${plan.windows.length === 1 ? "" : "s"} drawn in full, every event in them:`,
    (witnesses ? `around each of the ${witnesses} witness${witnesses === 1 ? "" : "es"} (${plan.marginS > 0 ? `the events it cites ± ${plan.marginS} s` : "from the first to the last event it cites: wider margins would not fit the budget of events"})` : "there is no witness to show") +
      faultText(input.faults.length, plan.faultsShown),
    `Operations and holds under way at a window's edges are drawn whole. The per-acquire latency and fairness plots are left out.`,
    `Every event is in ${RUN_FILES.history}${d.decisions === null ? "" : ` and every resource decision in ${RUN_FILES.resource}`} in this run's directory.`,
  ];
  return `<div class="downsampled" id="downsampled"><b>Downsampled report.</b> ${esc(parts.join(" "))}</div>`;
}

function faultText(total: number, shown: number): string {
  if (total === 0) return "; the run has no faults.";
  const rest = "; the others are shaded in the overview and listed under Faults.";
  if (shown === 0) return `; no window around a fault fits the budget of events, so the ${total} fault${total === 1 ? " is" : "s are"} shaded in the overview and listed under Faults.`;
  if (shown === total) return `, and around ${total === 1 ? "the fault" : `each of the ${total} faults`} (its start and its end ± 1 s).`;
  return `, and around the first ${shown} of the ${total} faults (each one's start and end ± 1 s)${rest}`;
}

const swatch = (cls: string, label: string) => `<span><svg width="24" height="14"><rect class="${cls}" x="1" y="3" width="22" height="8"/></svg>${label}</span>`;

export function renderDigestHtml(input: DigestInput): string {
  const { header, results, digest: d, plan } = input;
  const verdict = verdictOf(results);
  const fencing = header.fencing === true ? "on" : header.fencing === false ? "off" : "unknown";
  const models = windowModels(input);
  const union = unionModel(input, models);
  const lat = readFigures(results.stats).acquire_latency_ms;
  const latency = renderLatencyOverview(d, input.faults, plan.windows, lat ? [["p50", lat.p50], ["p99", lat.p99]] : []);
  const keyLists = new Set<string>();
  let keys: string[] = [];
  const kinds = new Set<KindMark>();
  const windows = models.map((m, k) => {
    const w = plan.windows[k];
    const t = renderTimeline(m);
    keyLists.add(JSON.stringify(t.keys));
    keys = t.keys;
    for (const k of t.kinds) kinds.add(k);
    const about = [...w.witnesses].map((id) => {
      const [gi, wi] = id.split("-").map(Number);
      return `<a href="#w${gi}-${wi}">${esc(input.groups[gi].type)} witness ${wi + 1}</a>`;
    });
    if (w.faults.length) about.push(esc(w.faults.map((f) => `${f.kind}${f.targets.length ? ` ${f.targets.join(",")}` : ""} ${seconds(f.from)} – ${f.healed ? seconds(f.to) : "never healed"}`).join(", ")));
    return `<h3 id="win-${k}">Window ${k + 1}: ${seconds(w.from)} – ${seconds(w.to)}${about.length ? `, around ${about.join(", ")}` : ""}</h3>` +
      `<p class="note">${m.events.length} events, ${m.ops.length} operations${m.input.decisions ? `, ${m.decisions.length} resource decisions` : ""}.</p>` +
      t.notes.map((n) => `<p class="note">${esc(n)}</p>`).join("") + `<div class="scroll">${t.svg}</div>`;
  });
  const fair = readFairness(results.stats);
  const fairness = fair === null ? `<p class="note">No acquire in this history.</p>`
    : fair === undefined ? `<p class="note">results.json has no fairness figures.</p>`
      : `<p>${fair.overtakes} overtakes over ${fair.acquires_granted} grants (${fair.overtake_rate} per grant); ${fair.overtaken} waiters overtaken${fair.wait_ms ? `; wait p50 ${millis(fair.wait_ms.p50)}, p99 ${millis(fair.wait_ms.p99)}, max ${millis(fair.wait_ms.max)}` : ""}.</p><p class="note">The per-acquire plot is left out of a downsampled report.</p>`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(verdict)} · ${esc(header.workload)} on ${esc(header.backend)} · ${esc(header.run)}</title>
<style>${CSS}${OVERVIEW_CSS}</style></head>
<body><main>
<h1><span class="verdict ${verdict}">${verdict}</span>${esc(header.workload)} on ${esc(header.backend)}, fencing ${fencing}</h1>
<div class="run">run <code>${esc(header.run)}</code>${headerExtras(header)}</div>
${notice(input)}
${figures(results)}
<h2 id="anomalies">Anomalies</h2>
${renderAnomalies(union)}
<h2 id="timeline">Timeline</h2>
<h3>Overview</h3>
<div class="legend">${swatch("ov-ok", "ok")}${swatch("ov-fail", "failed")}${swatch("ov-stale", "write refused: stale fence")}${swatch("ov-info", "unknown (info)")}${swatch("ov-win", "window drawn in full (click to go to it)")}</div>
<div class="scroll">${renderOpsOverview(d, input.faults, plan.windows)}</div>
<h3>Windows drawn in full</h3>
${mapNote(union)}
${windows.length ? timelineLegend(keyLists.size === 1 ? keys : [], kinds) : `<p class="note">No witness and no fault to draw a window around.</p>`}
${windows.join("\n")}
<h2 id="latency">Acquire latency</h2>
${latency.count === 0 ? `<p class="note">No acquire in this history.</p>` : `<div class="legend"><span><svg width="24" height="14"><line class="q-p50" x1="1" x2="23" y1="7" y2="7"/></svg>p50 per bucket</span><span><svg width="24" height="14"><line class="q-p99" x1="1" x2="23" y1="7" y2="7"/></svg>p99 per bucket</span><span><svg width="24" height="14"><line class="q-max" x1="1" x2="23" y1="7" y2="7"/></svg>max per bucket</span><span><svg width="24" height="14"><line class="pct" x1="1" x2="23" y1="7" y2="7"/></svg>p50 / p99 from results</span></div>
<div class="scroll">${latency.svg}</div>`}
<h2 id="fairness">Fairness</h2>
${fairness}
<h2 id="faults">Faults</h2>
${faultTable(input.faults)}
<h2 id="history">History</h2><p class="note">${esc(`${d.events} history events, ${d.ops} client operations, ${d.holds} holds` + (d.decisions === null ? "; no resource log." : `, ${d.decisions} resource decisions.`))}</p>
</main><script>${SCRIPT}</script></body></html>
`;
}
