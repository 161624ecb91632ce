// The anomaly list: every witness of every type, its sentence, and the events and
// resource decisions it names quoted once each with index (or seq) and time, as Elle
// and Knossos quote them. Each witness links to its highlight in the timeline and the
// highlight links back (ids `w<type>-<n>` and `tl-w<type>-<n>`; numbers, never names
// from the results, so no id needs escaping).
import { outcomeWord, type HistoryEvent, type ResourceDecision } from "../store/events.ts";
import { esc, json, seconds } from "./format.ts";
import type { PageData } from "./page-data.ts";
import type { AnomalyGroup, WitnessView } from "./results.ts";

const STANDARD_FIELDS = new Set(["key", "events", "seqs", "explanation"]);

export function renderAnomalies(m: PageData): string {
  const valid = m.input.results.valid;
  // Indexes into m.groups, which the timeline's highlights use too.
  const safety = m.groups.map((g, gi) => ({ g, gi })).filter(({ g }) => g.liveness !== "reported");
  const live = m.groups.map((g, gi) => ({ g, gi })).filter(({ g }) => g.liveness === "reported");
  const anomalies = safety.length === 0
    ? (valid === false
      ? `<p class="note">The verdict is invalid but results.json lists no anomaly.</p>`
      : `<p class="none">No anomalies found.</p>`)
    : safety.map(({ g, gi }) => renderGroup(m, g, gi)).join("");
  const liveness = live.length === 0 ? "" :
    `<p class="note liveness-note">Liveness findings are about progress, not safety: they are listed here but do not count toward the verdict unless the run is checked with <code>--liveness strict</code>.</p>` +
    live.map(({ g, gi }) => renderGroup(m, g, gi)).join("");
  return anomalies + liveness;
}

function renderGroup(m: PageData, g: AnomalyGroup, gi: number): string {
  const items = g.witnesses.map((w, wi) => renderWitness(m, w, gi, wi)).join("");
  const n = g.witnesses.length;
  const noun = g.liveness ? (n === 1 ? "finding" : "findings") : (n === 1 ? "witness" : "witnesses");
  const tag = g.liveness === "reported" ? ` <span class="tag liveness">liveness · not counted</span>`
    : g.liveness === "counted" ? ` <span class="tag liveness">liveness · counted (--liveness strict)</span>` : "";
  return `<section class="anomaly${g.liveness ? " liveness" : ""}"><h3>${esc(g.type)}${tag} <span class="count">${n} ${noun}</span></h3>` +
    (n ? `<ol class="witnesses">${items}</ol>` : `<p class="note">Listed in anomaly_types without witnesses.</p>`) + `</section>`;
}

function renderWitness(m: PageData, w: WitnessView, gi: number, wi: number): string {
  const located = w.events.some((i) => m.eventAt.has(i)) || w.seqs.some((s) => m.decisionAt.has(s));
  const link = located ? ` <a class="show" href="#tl-w${gi}-${wi}">show in timeline ↓</a>` : "";
  const key = w.key !== undefined ? `<div class="wkey">key <code>${esc(json(w.key, 200))}</code></div>` : "";
  const extra = Object.entries(w.witness).filter(([k]) => !STANDARD_FIELDS.has(k));
  const details = extra.length
    ? `<details><summary>witness details</summary><pre>${esc(json(Object.fromEntries(extra), 4000))}</pre></details>` : "";
  return `<li id="w${gi}-${wi}"><p class="explanation">${esc(w.explanation)}${link}</p>${key}` +
    eventTable(m, w.events) + decisionTable(m, w.seqs) + details + `</li>`;
}

function eventTable(m: PageData, indexes: number[]): string {
  if (indexes.length === 0) return "";
  const rows = [...new Set(indexes)].sort((a, b) => a - b).map((i) => {
    const e = m.eventAt.get(i);
    if (!e) return `<tr class="missing"><td>#${i}</td><td colspan="7">not in the history</td></tr>`;
    return eventRow(m, e);
  });
  return `<table class="events"><thead><tr><th>event</th><th>time</th><th>process</th><th>type</th><th>f</th><th>key</th><th>value</th><th>error</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function eventRow(m: PageData, e: HistoryEvent): string {
  // Name the other half of the operation so a reader can find it without searching.
  const op = m.opOfEvent.get(e.index);
  let pair = "";
  if (op && op.invoke === e) pair = op.completion ? `completed by #${op.completion.index}` : "never completed";
  else if (op) pair = `invoked at #${op.invoke.index}, ${seconds(op.invoke.time)}`;
  const proc = typeof e.process === "number" ? processText(m, e.process) : String(e.process);
  return `<tr class="t-${e.type === "ok" || e.type === "fail" || e.type === "info" ? e.type : "invoke"}">` +
    `<td>#${esc(e.index)}</td><td>${seconds(e.time)}</td><td>${esc(proc)}</td><td>${esc(e.type)}</td><td>${esc(e.f)}</td>` +
    `<td><code>${esc(json(e.key, 120))}</code></td><td><code>${esc(json(e.value, 300))}</code></td>` +
    `<td>${esc(e.error ?? "")}${pair ? `<span class="pair">${esc(pair)}</span>` : ""}</td></tr>`;
}

function decisionTable(m: PageData, seqs: number[]): string {
  if (seqs.length === 0) return "";
  const rows = [...new Set(seqs)].sort((a, b) => a - b).map((s) => {
    const d = m.decisionAt.get(s);
    if (!d) return `<tr class="missing"><td>seq ${s}</td><td colspan="9">not in the resource log${m.input.decisions ? "" : " (no resource log)"}</td></tr>`;
    return decisionRow(m, d);
  });
  return `<table class="decisions"><thead><tr><th>decision</th><th>time</th><th>process</th><th>op</th><th>key</th><th>owner</th><th>fence</th><th>max before</th><th>outcome</th><th>data</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

/** `p3`, and the worker it ran in where the run recorded it: `p3 · worker-2`. */
function processText(m: PageData, p: number): string {
  const worker = m.processes?.[String(p)]?.worker;
  return worker === undefined ? `p${p}` : `p${p} · ${worker}`;
}

function decisionRow(m: PageData, d: ResourceDecision): string {
  return `<tr class="${outcomeWord(d)}"><td>seq ${esc(d.seq)}</td><td>${seconds(d.time)}</td><td>${esc(processText(m, d.process))}</td>` +
    `<td>${esc(d.op)}</td><td><code>${esc(json(d.key, 120))}</code></td><td><code>${esc(json(d.owner, 120))}</code></td>` +
    `<td>${esc(d.fence ?? "null")}</td><td>${esc(d.max_before ?? "null")}</td>` +
    `<td>${outcomeWord(d)}${d.fencing ? "" : " (fencing off)"}</td><td><code>${esc(json(d.data, 200))}</code></td></tr>`;
}
