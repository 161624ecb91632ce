// One point per operation: x its invoke on the run's time axis, y a duration in ms on
// a log scale (durations span microseconds to the length of a pause), with the same
// fault windows as the timeline so a reader can see which fault slowed what. The
// acquire-latency and the fairness plots are both this, with their own points.
import { esc } from "./format.ts";
import type { PageData } from "./page-data.ts";
import { faultLayer, px, timeAxis, xOf, type TimeScale } from "./svg.ts";

export const MAX_POINTS = 8_000;
const FULL_TITLES = 2_000;
const LEFT = 64, RIGHT = 24, AXIS = 18, LABEL_ROWS = 2, PLOT_H = 240, BOTTOM = 30, WIDTH = 1100;
const TOP = AXIS + LABEL_ROWS * 12 + 4;

export type Mark = "dot" | "cross" | "triangle";

export interface ScatterPoint {
  /** Run time of the x axis (ns). */
  t: number;
  ms: number;
  /** Its CSS class, also what points are merged and layered by. */
  cls: string;
  mark: Mark;
  title: (brief: boolean) => string;
}

export interface ScatterSpec {
  /** The svg's class and aria-label. */
  name: string;
  label: string;
  points: readonly ScatterPoint[];
  /** Classes from the bottom layer up. */
  layers: readonly string[];
  /** The class thinned evenly when there are too many points; every other is kept. */
  common: string;
  /** The note when thinned: `kept` of `distinct` points are drawn. */
  thinned: (kept: number, distinct: number) => string;
  /** Horizontal reference lines, e.g. p50 and p99 from results.json. */
  lines: ReadonlyArray<readonly [string, number]>;
}

export interface Scatter {
  svg: string;
  notes: string[];
}

interface Point { x: number; y: number; cls: string; mark: Mark; n: number; title: (brief: boolean) => string }

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

export function renderScatter(m: PageData, spec: ScatterSpec): Scatter {
  // Log scale over whole decades; zero durations (clock granularity) sit on the floor.
  let min = Infinity, max = 0;
  for (const p of spec.points) if (p.ms > 0) { min = Math.min(min, p.ms); max = Math.max(max, p.ms); }
  const lo = 10 ** Math.floor(Math.log10(Math.max(0.001, Number.isFinite(min) ? min : 0.1)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(lo * 10, max)));
  const bottom = TOP + PLOT_H;
  const y = (ms: number) => bottom - ((Math.log10(Math.max(ms, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * PLOT_H;
  const scale: TimeScale = { t0: m.t0, t1: m.t1, left: LEFT, width: WIDTH };

  const all: Point[] = spec.points.map((p) => ({ x: xOf(scale, p.t), y: y(p.ms), cls: p.cls, mark: p.mark, n: 1, title: p.title }));
  // Points on one pixel (then on coarser squares, while too many) are drawn once.
  let res = 1;
  let points = mergeAt(all, res);
  while (points.length > MAX_POINTS && res < 8) points = mergeAt(all, (res *= 2));
  const notes: string[] = [];
  if (points.length > MAX_POINTS) {
    // The other classes are rarer and say more; keep them, then thin the common one evenly.
    const rare = points.filter((p) => p.cls !== spec.common);
    const common = points.filter((p) => p.cls === spec.common);
    const room = Math.max(0, MAX_POINTS - rare.length);
    const step = common.length / Math.max(1, room);
    const kept = [...rare.slice(0, MAX_POINTS), ...Array.from({ length: Math.min(room, common.length) }, (_, k) => common[Math.floor(k * step)])];
    notes.push(spec.thinned(kept.length, points.length));
    points = kept;
  } else if (res > 1) {
    notes.push(`Acquires within the same ${res} px square are drawn as one point; its tooltip says how many.`);
  }
  const brief = points.length > FULL_TITLES;
  const layer = (cls: string) => spec.layers.indexOf(cls);
  points.sort((a, b) => layer(a.cls) - layer(b.cls));

  const height = bottom + BOTTOM;
  const out: string[] = [];
  out.push(`<svg class="${esc(spec.name)}" width="${LEFT + WIDTH + RIGHT}" height="${height}" viewBox="0 0 ${LEFT + WIDTH + RIGHT} ${height}" role="img" aria-label="${esc(spec.label)}">`);
  out.push(`<rect class="plot" x="${LEFT}" y="${TOP}" width="${WIDTH}" height="${PLOT_H}"/>`);
  out.push(faultLayer(m.windows, scale, TOP, bottom, LABEL_ROWS));
  out.push(`<g class="axis">${timeAxis(scale, AXIS, bottom, 10)}`);
  for (let v = lo; v <= hi * 1.0001; v *= 10) {
    const yy = px(y(v));
    out.push(`<line class="grid" x1="${LEFT}" x2="${LEFT + WIDTH}" y1="${yy}" y2="${yy}"/><text class="tick" x="${LEFT - 6}" y="${yy}" dy="4" text-anchor="end">${decade(v)}</text>`);
  }
  out.push(`<text class="tick" x="${LEFT + WIDTH / 2}" y="${bottom + 22}" text-anchor="middle">time of invoke (run time)</text></g>`);
  for (const [name, v] of spec.lines) {
    const yy = px(y(v));
    out.push(`<line class="pct" x1="${LEFT}" x2="${LEFT + WIDTH}" y1="${yy}" y2="${yy}"/><text class="pct-label" x="${LEFT + WIDTH + 2}" y="${yy}" dy="4">${esc(name)}</text>`);
  }
  out.push(`<g class="points">${points.map((p) => drawPoint(p, brief)).join("")}</g></svg>`);
  return { svg: out.join(""), notes };
}

/** Axis labels for powers of ten: `0.01 ms`, `10 ms`, `1 s`. */
function decade(ms: number): string {
  const v = Number(ms.toPrecision(1));
  return v >= 1000 ? `${v / 1000} s` : `${v} ms`;
}

function drawPoint(p: Point, brief: boolean): string {
  const title = `<title>${esc(p.title(brief) + (p.n > 1 ? `\n(+${p.n - 1} more here)` : ""))}</title>`;
  const x = px(p.x), y = px(p.y);
  const cls = esc(p.cls);
  if (p.mark === "dot") return `<circle class="${cls}" cx="${x}" cy="${y}" r="2.5">${title}</circle>`;
  if (p.mark === "cross") return `<path class="${cls}" d="M${px(p.x - 3)} ${px(p.y - 3)}l6 6m0 -6l-6 6">${title}</path>`;
  return `<path class="${cls}" d="M${x} ${px(p.y - 4)}l4 7h-8z">${title}</path>`;
}
