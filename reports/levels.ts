// A semaphore's permit level over time, drawn above the timeline's lanes: one strip
// per key, how many of its holds were held at each moment. The line counts holds
// certainly valid (from the grant to the release's invoke or the lease's end,
// whichever came first), which is what semaphore-overflow counts, so the line goes
// above the permits' dashed line, in the anomaly colour, exactly where more holds
// than permits were certainly valid. The shade behind it counts holds up to their
// release's completion (or as far as they are drawn): a client may still have acted
// on those, so a shade above the line is no anomaly.
//
// Levels are kept per pixel column (the highest in the column), so a run of any
// length draws at most a few points per column and a brief overflow still shows.
import { esc, seconds } from "./format.ts";
import type { PageData } from "./page-data.ts";
import { heldUntil, type Hold } from "./ops.ts";
import { px, type TimeScale } from "./svg.ts";

/** Keys drawn at most; the others are named in a note. */
const MAX_STRIPS = 6;
/** Px per hold of level, and the height of a key's strip within these bounds. */
const UNIT = 7, MIN_STRIP = 44, MAX_STRIP = 96, PAD = 6;

export interface LevelStrips {
  height: number;
  notes: string[];
  /** The strips, drawn from `top` down. */
  draw: (top: number) => string;
}

interface KeyLevels {
  key: string;
  /** Highest level per column: certainly valid, and possibly held. */
  certain: Uint16Array;
  possible: Uint16Array;
  peak: number;
}

/** The highest level in each column of [start, end) intervals; an end at the same time as a start comes first. */
function columnLevels(spans: readonly [number, number][], col: (t: number) => number, cols: number): Uint16Array {
  const out = new Uint16Array(cols);
  const edges: [number, number][] = [];
  for (const [s, e] of spans) if (e > s) edges.push([s, 1], [e, -1]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let level = 0;
  for (let i = 0; i < edges.length; i++) {
    level += edges[i][1];
    const next = i + 1 < edges.length ? edges[i + 1][0] : edges[i][0];
    if (level <= 0 || next <= edges[i][0]) continue;
    const c1 = Math.min(cols - 1, col(next));
    for (let c = Math.max(0, col(edges[i][0])); c <= c1; c++) if (out[c] < level) out[c] = level;
  }
  return out;
}

function levelsOf(m: PageData, holds: readonly Hold[], key: string, col: (t: number) => number, cols: number): KeyLevels {
  const certain: [number, number][] = [];
  const possible: [number, number][] = [];
  for (const h of holds) {
    const ok = h.acquire.completion;
    if (!ok) continue;
    const end = heldUntil(h, m.t1);
    const sure = Math.min(end, h.leaseEnd ?? Infinity, h.release?.invoke.time ?? Infinity);
    certain.push([ok.time, sure]);
    possible.push([ok.time, end]);
  }
  const c = columnLevels(certain, col, cols);
  return { key, certain: c, possible: columnLevels(possible, col, cols), peak: peakOf(c) };
}

function peakOf(levels: Uint16Array): number {
  let most = 0;
  for (const l of levels) if (l > most) most = l;
  return most;
}

/** A step path along the columns' levels (`area`: closed down to the baseline). */
function stepPath(levels: Uint16Array, x: (c: number) => number, y: (l: number) => number, area: boolean): string {
  const parts = [`M${px(x(0))} ${px(y(0))}`];
  let at = 0;
  for (let c = 0; c < levels.length; c++) {
    if (levels[c] === at) continue;
    parts.push(`H${px(x(c))}V${px(y(levels[c]))}`);
    at = levels[c];
  }
  parts.push(`H${px(x(levels.length))}`);
  if (area) parts.push(`V${px(y(0))}Z`);
  return parts.join("");
}

/** The strips of a semaphore's run, or null for any other kind. */
export function levelStrips(m: PageData, scale: TimeScale): LevelStrips | null {
  if (m.lock?.lock !== "semaphore") return null;
  const permits = m.lock.permits;
  const cols = Math.max(1, Math.ceil(scale.width));
  const span = Math.max(1, m.t1 - m.t0);
  const col = (t: number) => Math.floor(((Math.min(m.t1, Math.max(m.t0, t)) - m.t0) / span) * scale.width);
  const colTime = (c: number) => m.t0 + (c / scale.width) * span;
  const byKey = new Map<string, Hold[]>();
  for (const h of m.holds) {
    const k = h.key ?? "";
    const list = byKey.get(k);
    if (list) list.push(h);
    else byKey.set(k, [h]);
  }
  const all = [...byKey].map(([k, hs]) => levelsOf(m, hs, k, col, cols));
  // Keys with the highest levels first when not all fit; otherwise in key order.
  const shown = all.length <= MAX_STRIPS ? all.sort((a, b) => (a.key < b.key ? -1 : 1))
    : all.sort((a, b) => b.peak - a.peak || (a.key < b.key ? -1 : 1)).slice(0, MAX_STRIPS);
  const notes: string[] = [];
  if (all.length > shown.length) notes.push(`The permit level is drawn for the ${shown.length} of ${all.length} keys whose holds were most at once.`);
  if (shown.length === 0) return null;
  // One scale for every key, so their strips compare at a glance.
  const most = Math.max(permits + 1, ...shown.map((k) => peakOf(k.possible)));
  const strip = Math.min(MAX_STRIP, Math.max(MIN_STRIP, most * UNIT + 16));
  const unit = (strip - 16) / most;
  const height = shown.length * strip + PAD;
  const draw = (top: number) => {
    const out: string[] = [`<g class="levels">`];
    shown.forEach((k, i) => {
      const y0 = top + i * strip, base = y0 + strip - 6;
      const y = (l: number) => base - l * unit;
      const x = (c: number) => scale.left + c;
      const title = `key ${k.key}: holds of a semaphore of ${permits} permit${permits === 1 ? "" : "s"}. Line: holds certainly valid at once (at most ${k.peak}); ` +
        `red above the dashed line at ${permits}: more than the permits, a semaphore-overflow. Shade: holds not yet released (a lease may have run out).`;
      out.push(`<rect class="lvl-bg" x="${scale.left}" y="${y0 + 2}" width="${px(scale.width)}" height="${strip - 4}"><title>${esc(title)}</title></rect>`);
      out.push(`<line class="lvl-base" x1="${scale.left}" x2="${px(scale.left + scale.width)}" y1="${px(base)}" y2="${px(base)}"/>`);
      // The key's name at the top of its strip, or at the bottom when the permits' label is up there.
      const nameY = y(permits) - (y0 + 12) < 12 ? base : y0 + 12;
      out.push(`<text class="lane-label" x="${scale.left - 6}" y="${px(nameY)}" font-size="11" text-anchor="end">${esc(k.key.length > 10 ? `${k.key.slice(0, 9)}…` : k.key)} holds<title>${esc(title)}</title></text>`);
      out.push(`<text class="lvl-axis" x="${scale.left - 6}" y="${px(y(permits) + 3.5)}" text-anchor="end">${permits} permit${permits === 1 ? "" : "s"}</text>`);
      out.push(`<path class="lvl-possible" d="${stepPath(k.possible, x, y, true)}"/>`);
      out.push(`<line class="lvl-permits" x1="${scale.left}" x2="${px(scale.left + scale.width)}" y1="${px(y(permits))}" y2="${px(y(permits))}"/>`);
      // Each stretch over the permits, in the anomaly colour, with when and how high.
      for (let c = 0; c < k.certain.length;) {
        if (k.certain[c] <= permits) { c++; continue; }
        let e = c, high = 0;
        while (e < k.certain.length && k.certain[e] > permits) high = Math.max(high, k.certain[e++]);
        const what = `${high} holds certainly valid at once on key ${k.key} around ${seconds(colTime(c))} – ${seconds(colTime(e))}; the semaphore has ${permits} permit${permits === 1 ? "" : "s"}`;
        out.push(`<rect class="lvl-over" x="${px(x(c))}" y="${px(y(high))}" width="${px(Math.max(1.5, e - c))}" height="${px(y(permits) - y(high))}"><title>${esc(what)}</title></rect>`);
        c = e;
      }
      out.push(`<path class="lvl-certain" d="${stepPath(k.certain, x, y, false)}"/>`);
    });
    out.push(`</g>`);
    return out.join("");
  };
  return { height, notes, draw };
}
