// The two pages of the store browser: the list of runs and one run's files. Every
// value comes from files a run wrote (a test name, a key, an anomaly type may be
// any string), so each one passes through esc() on its way into the page.
import type { RunSummary, SoakListing } from "./store.ts";
import { runHref } from "./paths.ts";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export const esc = (v: unknown): string => String(v).replace(/[&<>"']/g, (c) => ESCAPES[c]);

const CSS = `
body { font: 14px/1.45 system-ui, sans-serif; color: #1d2228; margin: 0; }
main { padding: 16px 24px 48px; max-width: 1200px; }
h1 { font-size: 20px; margin: 0 0 12px; }
table { border-collapse: collapse; } th, td { border: 1px solid #dde; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f4f7; font-weight: 600; font-size: 12px; } td code { font-size: 12px; }
.v { display: inline-block; padding: 0 8px; border-radius: 4px; color: #fff; font-weight: 700; font-size: 12px; }
.VALID { background: #2b9a3e; } .INVALID { background: #d62728; } .UNKNOWN { background: #b8860b; }
.NOT.CHECKED, .UNREADABLE { background: #889; } .muted { color: #667; }`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><style>${CSS}</style></head><body><main>${body}</main></body></html>\n`;
}

const verdict = (v: RunSummary["verdict"]): string => `<span class="v ${esc(v)}">${esc(v)}</span>`;

function soakTable(soaks: SoakListing[]): string {
  if (soaks.length === 0) return "";
  const rows = soaks.map((s) => {
    const v = s.exitCode === null ? "NOT CHECKED" : s.exitCode === 0 ? "VALID" : s.exitCode === 1 ? "INVALID" : "UNKNOWN";
    const link = s.exitCode === null ? esc(s.rel) : `<a href="${esc(runHref(s.rel, "summary.html"))}">${esc(s.rel)}</a>`;
    return (
      `<tr><td>${link}<br><span class="muted">matrix ${esc(s.matrix)}, ${s.configurations} configurations</span></td><td>${esc(s.started ?? "")}</td>` +
      `<td><span class="v ${v}">exit ${s.exitCode ?? "-"}</span> ${esc(s.verdict)}</td>` +
      `<td>${s.missed.map((m) => `<code>${esc(m)}</code>`).join(", ")}</td><td>${s.worse.map((w) => esc(w)).join("<br>")}</td></tr>`
    );
  });
  return `<h2>Soaks</h2><table><thead><tr><th>soak</th><th>started</th><th>verdict</th><th>missed</th><th>worse since the soak before</th></tr></thead><tbody>${rows.join("")}</tbody></table><h2>Runs</h2>`;
}

export function listPage(store: string, runs: RunSummary[], soaks: SoakListing[] = []): string {
  const rows = runs.map(
    (r) =>
      `<tr><td><a href="${esc(runHref(r.rel))}">${esc(r.test)}</a><br><code class="muted">${esc(r.rel)}</code></td>` +
      `<td>${esc(r.started ?? "")}</td><td>${verdict(r.verdict)}</td>` +
      `<td>${r.anomalyTypes.map((t) => `<code>${esc(t)}</code>`).join(", ")}</td>` +
      `<td>${r.files.includes("report.html") ? `<a href="${esc(runHref(r.rel, "report.html"))}">report</a>` : ""}</td></tr>`,
  );
  const table = runs.length
    ? `<table><thead><tr><th>test</th><th>started</th><th>verdict</th><th>anomalies</th><th></th></tr></thead><tbody>${rows.join("")}</tbody></table>`
    : `<p class="muted">No runs yet: <code>fencecheck test</code> records one.</p>`;
  return page("fencecheck runs", `<h1>fencecheck runs</h1><p class="muted">${runs.length} runs${soaks.length ? ` and ${soaks.length} soaks` : ""} in <code>${esc(store)}</code></p>${soakTable(soaks)}${table}`);
}

export function runPage(r: RunSummary): string {
  const files = r.files.map((f) => `<li><a href="${esc(runHref(r.rel, f))}">${esc(f)}</a></li>`).join("");
  const logs = r.logs.map((f) => `<li><a href="${esc(runHref(r.rel, "logs", f))}">logs/${esc(f)}</a></li>`).join("");
  const anomalies = r.anomalyTypes.length ? `<p>anomalies: ${r.anomalyTypes.map((t) => `<code>${esc(t)}</code>`).join(", ")}</p>` : "";
  return page(
    r.test,
    `<p><a href="/">all runs</a></p><h1>${esc(r.test)}</h1>` +
      `<p>${verdict(r.verdict)} <code class="muted">${esc(r.rel)}</code> ${esc(r.started ?? "")}</p>${anomalies}` +
      `<h2>files</h2><ul>${files || `<li class="muted">none</li>`}</ul>` +
      `<h2>logs</h2><ul>${logs || `<li class="muted">none</li>`}</ul>`,
  );
}
