// An experiment's report.html: its summary, tables and line plots on one
// self-contained page (inline CSS and SVG, nothing fetched), readable offline and
// from an unpacked CI artifact.
import { esc, REPORT_CSS } from "../reports/index.ts";
import type { Findings, Plot } from "./experiment.ts";

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];
const W = 640;
const H = 300;
// The left margin holds tick labels as wide as "1.0e+4" and, beside them, the rotated axis label.
const M = { left: 78, right: 150, top: 24, bottom: 44 };

/** Round ticks (1, 2, 5 × 10^k) over [lo, hi]. */
function ticks(lo: number, hi: number, max = 6): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / max;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((v) => v >= raw) ?? 10 * pow;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

const label = (v: number): string => (Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-2) ? v.toExponential(1) : String(Number(v.toPrecision(4))));

export function plotSvg(p: Plot): string {
  const pts = p.series.flatMap((s) => s.points);
  if (pts.length === 0) return `<p class="note">${esc(p.title)}: no points.</p>`;
  const fx = (x: number): number => (p.logX ? Math.log10(Math.max(x, 1e-9)) : x);
  const xs = pts.map(([x]) => fx(x));
  const ys = pts.map(([, y]) => y);
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs) === x0 ? x0 + 1 : Math.max(...xs);
  const y0 = Math.min(0, ...ys);
  const y1 = Math.max(...ys) === y0 ? y0 + 1 : Math.max(...ys) * 1.05;
  const px = (x: number): number => M.left + ((fx(x) - x0) / (x1 - x0)) * (W - M.left - M.right);
  const py = (y: number): number => H - M.bottom - ((y - y0) / (y1 - y0)) * (H - M.top - M.bottom);
  const xTicks = p.logX ? [...new Set(pts.map(([x]) => x))].sort((a, b) => a - b) : ticks(x0, x1);
  const parts: string[] = [];
  for (const t of ticks(y0, y1)) parts.push(`<line class="grid" x1="${M.left}" x2="${W - M.right}" y1="${py(t)}" y2="${py(t)}"/><text class="ax" x="${M.left - 6}" y="${py(t) + 4}" text-anchor="end">${label(t)}</text>`);
  for (const t of xTicks) parts.push(`<text class="ax" x="${px(t)}" y="${H - M.bottom + 16}" text-anchor="middle">${label(t)}</text>`);
  p.series.forEach((s, i) => {
    const c = COLORS[i % COLORS.length];
    const sorted = [...s.points].sort((a, b) => a[0] - b[0]);
    parts.push(`<polyline fill="none" stroke="${c}" stroke-width="2" points="${sorted.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(" ")}"/>`);
    for (const [x, y] of sorted) parts.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${c}"><title>${esc(s.name)}: ${label(x)}, ${label(y)}</title></circle>`);
    parts.push(`<text x="${W - M.right + 10}" y="${M.top + 14 * i + 8}" class="ax" style="fill:${c}">${esc(s.name)}</text>`);
  });
  parts.push(`<text class="ax" x="${(M.left + W - M.right) / 2}" y="${H - 8}" text-anchor="middle">${esc(p.x)}</text>`);
  parts.push(`<text class="ax" transform="translate(14 ${(M.top + H - M.bottom) / 2}) rotate(-90)" text-anchor="middle">${esc(p.y)}</text>`);
  return `<figure><figcaption><b>${esc(p.title)}</b></figcaption><svg class="xplot" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(p.title)}">${parts.join("")}</svg></figure>`;
}

export function renderExperimentHtml(e: { name: string; title: string; started: string; command: string; quick: boolean }, f: Findings): string {
  const tables = f.tables
    .map((t) => `<h2>${esc(t.title)}</h2><table class="soak"><tr>${t.head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr>${t.rows
      .map((r) => `<tr>${r.map((c) => `<td${typeof c === "number" ? ' class="num"' : ""}>${esc(String(c))}</td>`).join("")}</tr>`)
      .join("")}</table>${t.note ? `<p class="note">${esc(t.note)}</p>` : ""}`)
    .join("\n");
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>experiment ${esc(e.name)} · ${esc(e.started)}</title>
<style>${REPORT_CSS}
td.num { text-align: right; } svg.xplot { background: #fff; } svg.xplot .grid { stroke: #ddd; } svg.xplot .ax { font: 12px system-ui, sans-serif; fill: #333; }</style></head>
<body><main>
<h1>${esc(e.title)}</h1>
<div class="run">experiment <code>${esc(e.name)}</code> · started <code>${esc(e.started)}</code>${e.quick ? " · <b>--quick</b>: a short version, not a measurement" : ""} · <code>${esc(e.command)}</code></div>
${f.summary.map((s) => `<p>${esc(s)}</p>`).join("\n")}
${f.plots.map(plotSvg).join("\n")}
${tables}
${f.runs.length ? `<h2>Runs</h2><ul>${f.runs.map((r) => `<li><a href="${esc(r)}/report.html">${esc(r)}</a></li>`).join("")}</ul>` : ""}
</main></body></html>
`;
}
