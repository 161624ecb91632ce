// The downsampled pictures of a large run (buckets.ts): operations per bucket as
// stacked bars, one row per `f`, and acquire latency quantiles per bucket on a log
// scale, both with the fault windows shaded and the windows drawn in full marked
// (each mark links to its window further down the page).
import { Buckets, OP_ROWS, OUTCOMES, type Quantiles } from "./buckets.ts";
import type { Digest } from "./digest.ts";
import { esc, millis, seconds } from "./format.ts";
import type { FaultWindow } from "./faults.ts";
import { faultLayer, px, timeAxis, xOf, type TimeScale } from "./svg.ts";
import type { Window } from "./windows.ts";

const LEFT = 96, RIGHT = 24, AXIS = 18, LABEL_ROWS = 3, WIDTH = 1100, ROW_H = 40, BOTTOM = 14, PLOT_H = 200;
const TOP = AXIS + LABEL_ROWS * 12 + 4;
const OUTCOME_CLASS: Record<(typeof OUTCOMES)[number], string> = { ok: "ov-ok", fail: "ov-fail", stale: "ov-stale", info: "ov-info" };

export const OVERVIEW_CSS = `
.downsampled { border: 2px solid #b8860b; background: #fffbea; border-radius: 6px; padding: 8px 12px; margin: 10px 0; }
.ov-ok { fill: var(--hold); } .ov-fail { fill: var(--fail); } .ov-stale { fill: var(--stale); } .ov-info { fill: var(--info); }
.ov-col { fill: transparent; } .ov-col:hover { fill: #0001; }
.ov-win { fill: var(--stale); fill-opacity: .12; stroke: var(--stale); stroke-width: 1; }
.q-p50 { stroke: var(--hold); fill: none; stroke-width: 1.5; } .q-p99 { stroke: var(--fail); fill: none; stroke-width: 1.2; }
.q-max { stroke: var(--info); fill: none; stroke-width: 1; stroke-dasharray: 3 2; }
`;

function scaleOf(d: Digest): TimeScale {
  return { t0: d.t0, t1: d.t1, left: LEFT, width: WIDTH };
}

/** Rows of f that occur in the run, with their bucket totals. */
function rows(b: Buckets): number[] {
  const out: number[] = [];
  OP_ROWS.forEach((_, r) => {
    for (let i = 0; i < b.used; i++) for (let o = 0; o < OUTCOMES.length; o++) if (b.count(i, r, o) > 0) { out.push(r); return; }
  });
  return out;
}

function windowMarks(ws: readonly Window[], s: TimeScale, top: number, bottom: number): string {
  return ws.map((w, k) => {
    const x0 = xOf(s, w.from), x1 = Math.max(xOf(s, w.to), x0 + 2);
    return `<a href="#win-${k}"><rect class="ov-win" x="${px(x0)}" y="${top}" width="${px(x1 - x0)}" height="${bottom - top}"><title>window ${k + 1}: ${seconds(w.from)} – ${seconds(w.to)}, drawn in full below</title></rect></a>`;
  }).join("");
}

/** Operations per bucket: one row per f, ok / failed / stale / unknown stacked. */
export function renderOpsOverview(d: Digest, faults: readonly FaultWindow[], ws: readonly Window[]): string {
  const b = d.buckets, s = scaleOf(d), rs = rows(b);
  const bottom = TOP + rs.length * ROW_H, height = bottom + BOTTOM;
  const bw = (b.width / Math.max(1, d.t1 - d.t0)) * WIDTH;
  const bx = (i: number) => xOf(s, b.origin + i * b.width);
  const out: string[] = [];
  out.push(`<svg class="overview" width="${LEFT + WIDTH + RIGHT}" height="${height}" viewBox="0 0 ${LEFT + WIDTH + RIGHT} ${height}" role="img" aria-label="operations per time bucket">`);
  out.push(faultLayer(faults, s, TOP, bottom, LABEL_ROWS));
  out.push(`<g class="axis">${timeAxis(s, AXIS, bottom, 10)}</g>`);
  rs.forEach((r, k) => {
    const y0 = TOP + k * ROW_H, base = y0 + ROW_H - 2;
    let peak = 0;
    for (let i = 0; i < b.used; i++) {
      let n = 0;
      for (let o = 0; o < OUTCOMES.length; o++) n += b.count(i, r, o);
      peak = Math.max(peak, n);
    }
    const unit = (ROW_H - 6) / Math.max(1, peak);
    out.push(`<line class="grid" x1="${LEFT}" x2="${LEFT + WIDTH}" y1="${base}" y2="${base}"/>`);
    out.push(`<text class="lane-label" x="${LEFT - 6}" y="${y0 + ROW_H / 2 + 4}" text-anchor="end" font-size="12">${OP_ROWS[r]}<title>${OP_ROWS[r]}: at most ${peak} per ${millis(b.width / 1e6)} bucket</title></text>`);
    const paths = OUTCOMES.map(() => [] as string[]);
    for (let i = 0; i < b.used; i++) {
      let y = base;
      OUTCOMES.forEach((_, o) => {
        const n = b.count(i, r, o);
        if (n === 0) return;
        const h = Math.max(0.6, n * unit);
        paths[o].push(`M${px(bx(i))} ${px(y - h)}h${px(Math.max(0.6, bw))}v${px(h)}h${px(-Math.max(0.6, bw))}z`);
        y -= h;
      });
    }
    OUTCOMES.forEach((name, o) => { if (paths[o].length) out.push(`<path class="${OUTCOME_CLASS[name]}" d="${paths[o].join("")}"/>`); });
  });
  // One column per bucket carries the bucket's figures as its tooltip.
  const cols: string[] = [];
  for (let i = 0; i < b.used; i++) {
    const parts = rs.map((r) => {
      const c = OUTCOMES.map((name, o) => [name, b.count(i, r, o)] as const).filter(([, n]) => n > 0);
      return c.length ? `${OP_ROWS[r]}: ${c.map(([name, n]) => `${n} ${name}`).join(", ")}` : "";
    }).filter(Boolean);
    if (parts.length === 0) continue;
    const q = b.quantiles(i);
    cols.push(`<rect class="ov-col" x="${px(bx(i))}" y="${TOP}" width="${px(Math.max(0.6, bw))}" height="${bottom - TOP}"><title>${esc(`${seconds(b.origin + i * b.width)} – ${seconds(b.origin + (i + 1) * b.width)}, by invoke time\n${parts.join("\n")}${q ? `\nacquire latency p50 ${millis(q.p50)}, p99 ${millis(q.p99)}, max ${millis(q.max)}` : ""}`)}</title></rect>`);
  }
  out.push(`<g class="cols">${cols.join("")}</g>`);
  out.push(windowMarks(ws, s, TOP, bottom));
  out.push(`</svg>`);
  return out.join("");
}

/** Acquire latency per bucket: p50, p99 and max lines on a log scale. */
export function renderLatencyOverview(d: Digest, faults: readonly FaultWindow[], ws: readonly Window[], lines: ReadonlyArray<readonly [string, number]>): { svg: string; count: number } {
  const b = d.buckets, s: TimeScale = { ...scaleOf(d), left: 64 };
  const qs: (Quantiles | null)[] = [];
  let count = 0, min = Infinity, max = 0;
  for (let i = 0; i < b.used; i++) {
    const q = b.quantiles(i);
    qs.push(q);
    if (!q) continue;
    count += q.n;
    if (q.p50 > 0) min = Math.min(min, q.p50);
    max = Math.max(max, q.max);
  }
  if (count === 0) return { svg: "", count };
  const lo = 10 ** Math.floor(Math.log10(Math.max(0.001, Number.isFinite(min) ? min : 0.1)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(lo * 10, max)));
  const bottom = TOP + PLOT_H, height = bottom + 30;
  const y = (ms: number) => bottom - ((Math.log10(Math.max(ms, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * PLOT_H;
  const mid = (i: number) => xOf(s, b.origin + (i + 0.5) * b.width);
  const line = (pick: (q: Quantiles) => number): string => {
    const parts: string[] = [];
    let pen = "M";
    qs.forEach((q, i) => {
      if (!q) { pen = "M"; return; }
      parts.push(`${pen}${px(mid(i))} ${px(y(pick(q)))}`);
      pen = "L";
    });
    return parts.join("");
  };
  const w = LEFT + WIDTH + RIGHT;
  const out: string[] = [`<svg class="latency-overview" width="${w}" height="${height}" viewBox="0 0 ${w} ${height}" role="img" aria-label="acquire latency quantiles per time bucket">`];
  out.push(`<rect class="plot" x="${s.left}" y="${TOP}" width="${WIDTH}" height="${PLOT_H}"/>`);
  out.push(faultLayer(faults, s, TOP, bottom, LABEL_ROWS));
  out.push(`<g class="axis">${timeAxis(s, AXIS, bottom, 10)}`);
  for (let v = lo; v <= hi * 1.0001; v *= 10) {
    const yy = px(y(v));
    out.push(`<line class="grid" x1="${s.left}" x2="${s.left + WIDTH}" y1="${yy}" y2="${yy}"/><text class="tick" x="${s.left - 6}" y="${yy}" dy="4" text-anchor="end">${v >= 1000 ? `${Number((v / 1000).toPrecision(1))} s` : `${Number(v.toPrecision(1))} ms`}</text>`);
  }
  out.push(`<text class="tick" x="${s.left + WIDTH / 2}" y="${bottom + 22}" text-anchor="middle">time of invoke (run time), ${millis(b.width / 1e6)} buckets</text></g>`);
  for (const [name, v] of lines) {
    const yy = px(y(v));
    out.push(`<line class="pct" x1="${s.left}" x2="${s.left + WIDTH}" y1="${yy}" y2="${yy}"/><text class="pct-label" x="${s.left + WIDTH + 2}" y="${yy}" dy="4">${esc(name)}</text>`);
  }
  out.push(`<path class="q-max" d="${line((q) => q.max)}"/><path class="q-p99" d="${line((q) => q.p99)}"/><path class="q-p50" d="${line((q) => q.p50)}"/>`);
  out.push(windowMarks(ws, s, TOP, bottom));
  out.push(`</svg>`);
  return { svg: out.join(""), count };
}
