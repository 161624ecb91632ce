// summary.html: the soak on one self-contained page. What changed since the last
// soak comes first (that is what a nightly soak is read for), then the table, then
// every run with a link to its report.html. Links are relative to the soak
// directory, so the page works opened from disk, from an unpacked CI artifact and
// through `npm run serve` alike. Every value from the files passes through esc().
import { esc, REPORT_CSS } from "../reports/index.ts";
import { WORSE } from "./compare.ts";
import { fencingText, libraryRows, tellsText } from "./libraries.ts";
import { duration, megabytes, partOf } from "./table.ts";
import { pct, type ConfigSummary, type SoakSummary } from "./summary.ts";
import type { RunRecord } from "./records.ts";

const CSS = `${REPORT_CSS}
.met { color: var(--ok); font-weight: 700; } .missed { color: var(--stale); font-weight: 700; } .not-judged { color: var(--muted); }
.worse { color: var(--stale); font-weight: 700; } .better { color: var(--ok); } tr.missed-row td:first-child { border-left: 4px solid var(--stale); }
.status-valid { color: var(--ok); } .status-invalid { color: var(--stale); } .status-unknown { color: #b8860b; } .status-crashed, .status-interrupted { color: var(--info); }
ul.changes li { margin: 3px 0; } td.num { text-align: right; white-space: nowrap; }
table.soak td { font: 13px/1.4 system-ui, sans-serif; } table.soak td code { word-break: normal; white-space: nowrap; } td.seed code, td.repeat code { white-space: nowrap; word-break: normal; }`;

export function renderSummaryHtml(s: SoakSummary): string {
  const missed = s.configurations.filter((c) => c.expectation === "missed");
  const verdictClass = s.exit_code === 0 ? "VALID" : s.exit_code === 1 ? "INVALID" : "UNKNOWN";
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>soak ${esc(s.matrix.name)} · ${esc(s.started)} · exit ${s.exit_code}</title>
<style>${CSS}</style></head>
<body><main>
<h1><span class="verdict ${verdictClass}">exit ${s.exit_code}</span>soak of matrix ${esc(s.matrix.name)}</h1>
<div class="run">${esc(s.verdict)}</div>
<div class="run">${partOf(s) ? `${esc(partOf(s)!)} · ` : ""}started <code>${esc(s.started)}</code> · wall time ${esc(duration(s.wall_s))} · seed <code>${s.seed}</code> · ${s.test_count} run${s.test_count === 1 ? "" : "s"} per configuration${s.disk_bytes === null ? "" : ` · ${esc(megabytes(s.disk_bytes))} on disk`} · matrix <code>${esc(s.matrix.source)}</code> (${esc(s.matrix.hash)})</div>
${s.runs_pruned ? `<p class="note">The run directories of this soak were removed by --keep-runs; the summary is all that is left.</p>` : ""}
<h2 id="changes">What changed</h2>
${changes(s)}
${missed.length ? `<h2 id="missed">Missed expectations</h2><ul>${missed.map((c) => `<li><a href="#c-${esc(c.name)}">${esc(c.name)}</a>: ${esc(c.why)}</li>`).join("")}</ul>` : ""}
<h2 id="configurations">Configurations</h2>
${table(s.configurations)}
${libraries(s.configurations)}
<h2 id="runs">Runs</h2>
${s.configurations.map((c) => runs(c, s.runs_pruned)).join("\n")}
</main></body></html>
`;
}

function libraries(configs: ConfigSummary[]): string {
  const rows = libraryRows(configs);
  if (rows.length === 0) return "";
  const found = (f: Record<string, string[]>): string => Object.entries(f).map(([t, w]) => `<b>${esc(t)}</b> (${esc(w.join(", "))})`).join("<br>") || "none";
  return `<h2 id="libraries">By lock client</h2><table class="soak"><tr><th>client</th><th>faults</th><th>fencing off: anomalies (fault found/runs)</th><th>fencing on</th><th>tells you it lost the lock</th></tr>${rows
    .map((r) => `<tr><td><code>${esc(r.client)}</code></td><td>${esc(r.faults.join(", "))}</td><td>${found(r.unfenced)}</td><td class="${r.fencedValid === r.fencedRuns ? "status-valid" : fencingText(r).startsWith("NOT") ? "status-invalid" : "status-unknown"}">${esc(fencingText(r))}</td><td>${esc(tellsText(r))}</td></tr>`)
    .join("")}</table>`;
}

function changes(s: SoakSummary): string {
  if (s.compared_with === null) return `<p class="note">No earlier soak of matrix ${esc(s.matrix.name)} to compare with.</p>`;
  if (s.changes.length === 0) return `<p>No change since <code>${esc(s.compared_with)}</code>.</p>`;
  return `<p>Since <code>${esc(s.compared_with)}</code>:</p><ul class="changes">${s.changes
    .map((c) => `<li><span class="${WORSE.has(c.kind) ? "worse" : "better"}">${esc(c.kind)}</span> ${esc(c.sentence)}</li>`)
    .join("")}</ul>`;
}

function table(configs: ConfigSummary[]): string {
  const head = ["configuration", "expect", "runs", "valid", "invalid", "unknown", "crashed", "not run", "expectation", "anomalies", "detection", "stale writes refused", "acquire p50 / p99 ms", "faults"];
  const rows = configs.map((c) => {
    const n = c.counts;
    const ran = n.valid + n.invalid + n.unknown + n.crashed + n.interrupted;
    return `<tr id="c-${esc(c.name)}" class="${c.expectation === "missed" ? "missed-row" : ""}"><td><b>${esc(c.name)}</b>${c.description ? `<span class="pair">${esc(c.description)}</span>` : ""}</td>
<td>${esc(c.expect_text)}</td><td class="num">${ran}/${c.planned}</td><td class="num">${n.valid}</td><td class="num">${n.invalid}</td><td class="num">${n.unknown}</td><td class="num">${n.crashed}</td><td class="num">${n.not_run + n.interrupted}</td>
<td><span class="${c.expectation}" title="${esc(c.why)}">${c.expectation === "met" ? "met" : c.expectation === "missed" ? "MISSED" : c.expectation === "observed" ? "observed" : "not judged"}</span><span class="pair">${esc(c.why)}</span></td>
<td>${Object.entries(c.anomalies).map(([t, k]) => `<code>${esc(t)}</code><span class="pair">in ${k} run${k === 1 ? "" : "s"}, ${c.witnesses[t] ?? 0} witnesses</span>`).join("") || "none"}</td>
<td>${c.detection.map((d) => `${esc(d.type)}: ${pct(d.rate)} (${d.found}/${d.runs}, min ${pct(d.min)})`).join("<br>") || "-"}</td>
<td>${c.exercised ? `in ${c.exercised.refused} of ${c.exercised.runs} runs${c.exercised.min !== null ? ` (min ${pct(c.exercised.min)})` : ""}` : "-"}</td>
<td class="num">${c.acquire_ms ? `${c.acquire_ms.p50.toFixed(1)} / ${c.acquire_ms.p99.toFixed(1)}` : "-"}</td>
<td>${Object.entries(c.faults).map(([f, k]) => `${esc(f.replace(/^start-/, ""))}&nbsp;×${k}`).join("<br>") || "-"}</td></tr>`;
  });
  return `<div class="scroll"><table class="soak"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows.join("\n")}</tbody></table></div>`;
}

function runs(c: ConfigSummary, pruned: boolean): string {
  const rows = c.runs.map((r) => runRow(r, pruned));
  for (const r of c.not_run) rows.push(`<tr class="missing"><td>#${r.index}</td><td class="seed"><code>${r.seed}</code></td><td>not run</td><td colspan="4">${esc(r.reason)}</td></tr>`);
  return `<h3>${esc(c.name)}</h3><table class="soak"><thead><tr><th>run</th><th>seed</th><th>verdict</th><th>anomalies</th><th>wall</th><th>links</th><th>repeat alone</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function runRow(r: RunRecord, pruned: boolean): string {
  const link = (path: string, text: string): string => (pruned ? `<span class="note">${esc(text)}</span>` : `<a href="${esc(href(path))}">${esc(text)}</a>`);
  const links = [
    r.run_dir ? link(`${r.run_dir}/report.html`, "report") : "",
    r.run_dir ? link(`${r.run_dir}/results.json`, "results.json") : "",
    link(r.output, "output"),
  ].filter(Boolean);
  const anomalies = r.anomaly_types.map((t) => `<code>${esc(t)}</code> ×${r.anomaly_counts[t] ?? "?"}`).join(", ");
  const verdict = `${r.status.toUpperCase()}${r.incomplete ? " (incomplete)" : ""}`;
  return `<tr><td>#${r.index}</td><td class="seed"><code>${r.seed}</code></td><td class="status-${esc(r.status)}">${esc(verdict)}</td>
<td>${anomalies || (r.error ? esc(r.error) : "none")}</td><td class="num">${r.wall_s.toFixed(1)} s</td><td>${links.join(" · ")}</td>
<td class="repeat"><code>fencecheck test ${esc(repeatArgs(r.argv).join(" "))}</code></td></tr>`;
}

/** The run's arguments without the soak's --store, which would put the repeat inside this soak. */
export function repeatArgs(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--store") {
      i++;
      continue;
    }
    out.push(argv[i]);
  }
  return out;
}

/** A relative link: each path segment encoded, the slashes kept. */
function href(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}
