// Acquire latency over time: one point per acquire at its invoke time, its latency
// on a log scale (latencies span microseconds to the length of a pause), with the
// same fault windows as the timeline so a reader can see which fault slowed what.
// An acquire that never completed is drawn at the latency it had reached when the
// history ended, which is a lower bound, and says so in its tooltip.
import { esc } from "./format.ts";
import { describeOp } from "./describe.ts";
import type { Model } from "./model.ts";
import { readFigures } from "./results.ts";
import { faultLayer, px, timeAxis, xOf, type TimeScale } from "./svg.ts";

export const MAX_POINTS = 8_000;
const FULL_TITLES = 2_000;
const LEFT = 64, RIGHT = 24, AXIS = 18, LABEL_ROWS = 2, PLOT_H = 240, BOTTOM = 30, WIDTH = 1100;
const TOP = AXIS + LABEL_ROWS * 12 + 4;

export interface LatencyPlot {
  svg: string;
  notes: string[];
  count: number;
}

interface Point { x: number; y: number; cls: "ok" | "fail" | "info"; n: number; title: (brief: boolean) => string }

function mergeAt(all: readonly Point[], res: number): Point[] {
  const buckets = new Map<string, Point>();
  for (const p of all) {
    const key = `${p.cls}|${Math.floor(p.x / res)}|${Math.floor(p.y / res)}`;
    const seen = buckets.get(key);
    if (seen) seen.n += p.n;
    else buckets.set(key, { ...p });
  }
  return [...buckets.values()];
}

export function renderLatency(m: Model): LatencyPlot {
  const acquires = m.ops.filter((o) => o.f === "acquire");
  const lat = acquires.map((o) => ((o.completion?.time ?? m.t1) - o.invoke.time) / 1e6);
  // Log scale over whole decades; zero latencies (clock granularity) sit on the floor.
  let min = Infinity, max = 0;
  for (const v of lat) if (v > 0) { min = Math.min(min, v); max = Math.max(max, v); }
  const lo = 10 ** Math.floor(Math.log10(Math.max(0.001, Number.isFinite(min) ? min : 0.1)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(lo * 10, max)));
  const bottom = TOP + PLOT_H;
  const y = (ms: number) => bottom - ((Math.log10(Math.max(ms, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * PLOT_H;
  const scale: TimeScale = { t0: m.t0, t1: m.t1, left: LEFT, width: WIDTH };

  const all: Point[] = acquires.map((op, i) => ({
    x: xOf(scale, op.invoke.time), y: y(lat[i]), cls: op.outcome, n: 1,
    title: (brief: boolean) => `${describeOp(op, undefined, brief)}${op.completion ? "" : `${brief ? "; " : "\n"}latency shown is what it had reached when the history ended`}`,
  }));
  // Points on one pixel (then on coarser squares, while too many) are drawn once.
  let res = 1;
  let points = mergeAt(all, res);
  while (points.length > MAX_POINTS && res < 8) points = mergeAt(all, (res *= 2));
  const notes: string[] = [];
  if (points.length > MAX_POINTS) {
    // Failures and unknowns are rarer and say more; keep them, then thin the rest evenly.
    const rare = points.filter((p) => p.cls !== "ok");
    const ok = points.filter((p) => p.cls === "ok");
    const room = Math.max(0, MAX_POINTS - rare.length);
    const step = ok.length / Math.max(1, room);
    const kept = [...rare.slice(0, MAX_POINTS), ...Array.from({ length: Math.min(room, ok.length) }, (_, k) => ok[Math.floor(k * step)])];
    notes.push(`${kept.length} of ${points.length} distinct points are drawn: every failed and unknown acquire, and an even sample of the successful ones.`);
    points = kept;
  } else if (res > 1) {
    notes.push(`Acquires within the same ${res} px square are drawn as one point; its tooltip says how many.`);
  }
  const brief = points.length > FULL_TITLES;
  // Failed acquires (often quick "busy" answers) under the successes, unknowns on top.
  const layer = { fail: 0, ok: 1, info: 2 };
  points.sort((a, b) => layer[a.cls] - layer[b.cls]);

  const height = bottom + BOTTOM;
  const out: string[] = [];
  out.push(`<svg class="latency" width="${LEFT + WIDTH + RIGHT}" height="${height}" viewBox="0 0 ${LEFT + WIDTH + RIGHT} ${height}" role="img" aria-label="acquire latency">`);
  out.push(`<rect class="plot" x="${LEFT}" y="${TOP}" width="${WIDTH}" height="${PLOT_H}"/>`);
  out.push(faultLayer(m.windows, scale, TOP, bottom, LABEL_ROWS));
  out.push(`<g class="axis">${timeAxis(scale, AXIS, bottom, 10)}`);
  for (let v = lo; v <= hi * 1.0001; v *= 10) {
    const yy = px(y(v));
    out.push(`<line class="grid" x1="${LEFT}" x2="${LEFT + WIDTH}" y1="${yy}" y2="${yy}"/><text class="tick" x="${LEFT - 6}" y="${yy}" dy="4" text-anchor="end">${decade(v)}</text>`);
  }
  out.push(`<text class="tick" x="${LEFT + WIDTH / 2}" y="${bottom + 22}" text-anchor="middle">time of invoke (run time)</text></g>`);
  const fig = readFigures(m.input.results.stats).acquire_latency_ms;
  if (fig) {
    for (const [name, v] of [["p50", fig.p50], ["p99", fig.p99]] as const) {
      const yy = px(y(v));
      out.push(`<line class="pct" x1="${LEFT}" x2="${LEFT + WIDTH}" y1="${yy}" y2="${yy}"/><text class="pct-label" x="${LEFT + WIDTH + 2}" y="${yy}" dy="4">${name}</text>`);
    }
  }
  out.push(`<g class="points">${points.map((p) => drawPoint(p, brief)).join("")}</g></svg>`);
  return { svg: out.join(""), notes, count: acquires.length };
}

/** Axis labels for powers of ten: `0.01 ms`, `10 ms`, `1 s`. */
function decade(ms: number): string {
  const v = Number(ms.toPrecision(1));
  return v >= 1000 ? `${v / 1000} s` : `${v} ms`;
}

function drawPoint(p: Point, brief: boolean): string {
  const title = `<title>${esc(p.title(brief) + (p.n > 1 ? `\n(+${p.n - 1} more here)` : ""))}</title>`;
  const x = px(p.x), y = px(p.y);
  if (p.cls === "ok") return `<circle class="pt-ok" cx="${x}" cy="${y}" r="2.5">${title}</circle>`;
  if (p.cls === "fail") return `<path class="pt-fail" d="M${px(p.x - 3)} ${px(p.y - 3)}l6 6m0 -6l-6 6">${title}</path>`;
  return `<path class="pt-info" d="M${x} ${px(p.y - 4)}l4 7h-8z">${title}</path>`;
}
