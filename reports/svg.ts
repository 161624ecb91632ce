// What the timeline and the latency plot share: one mapping from run time to x, a
// time axis with round ticks, and fault windows shaded the same way in both, so a
// reader can line a latency spike up with the pause that caused it.
import { clip, esc, json, seconds } from "./format.ts";
import type { FaultWindow } from "./faults.ts";

export interface TimeScale {
  t0: number;
  t1: number;
  /** x of t0 and the width in px that [t0, t1] spans. */
  left: number;
  width: number;
}

export function xOf(s: TimeScale, t: number): number {
  const span = s.t1 - s.t0;
  return span <= 0 ? s.left : s.left + ((t - s.t0) / span) * s.width;
}

/** One decimal place is enough for pixels and keeps big pages smaller. */
export const px = (v: number): string => (Math.round(v * 10) / 10).toString();

/** Round steps (1, 2, 5 × 10^k seconds) giving at most `max` ticks over the scale. */
export function timeTicks(s: TimeScale, max: number): number[] {
  const span = (s.t1 - s.t0) / 1e9;
  if (span <= 0) return [s.t0];
  const raw = span / Math.max(1, max);
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((v) => v >= raw) ?? 10 * pow;
  const ticks: number[] = [];
  for (let v = Math.ceil(s.t0 / 1e9 / step) * step; v <= s.t1 / 1e9 + 1e-12; v += step) ticks.push(v * 1e9);
  return ticks;
}

const tickLabel = (ns: number): string => {
  const v = ns / 1e9;
  return `${Number(v.toPrecision(6))} s`;
};

/** Vertical grid lines with labels above `top`. */
export function timeAxis(s: TimeScale, top: number, bottom: number, maxTicks: number): string {
  return timeTicks(s, maxTicks).map((t) => {
    const x = px(xOf(s, t));
    return `<line class="grid" x1="${x}" x2="${x}" y1="${top}" y2="${bottom}"/>` +
      `<text class="tick" x="${x}" y="${top - 4}" text-anchor="middle">${tickLabel(t)}</text>`;
  }).join("");
}

const KNOWN_FAULTS = new Set(["pause", "partition", "latency", "clock", "kill"]);
/** A CSS class for a fault kind; kinds from the history never become class names. */
export const faultClass = (kind: string): string => `fault-${KNOWN_FAULTS.has(kind) ? kind : "other"}`;

export function faultTitle(w: FaultWindow): string {
  const what = `${w.kind}${w.targets.length ? ` on ${w.targets.join(", ")}` : ""}`;
  const when = w.from === w.to ? `at ${seconds(w.from)}`
    : `${seconds(w.from)} – ${w.healed ? seconds(w.to) : "end of history (never healed)"}`;
  const params = json(w.start?.value ?? w.stop?.value, 300);
  return `${what}, ${when}${params ? ` ${params}` : ""}`;
}

/**
 * Fault windows shaded from `top` to `bottom`, with labels in `labelRows` rows of 12px
 * ending at `top` (0 rows: no labels, the title tooltip still names the fault).
 */
export function faultLayer(windows: readonly FaultWindow[], s: TimeScale, top: number, bottom: number, labelRows: number): string {
  const rowEnds: number[] = new Array(labelRows).fill(-Infinity);
  const out: string[] = [];
  for (const w of windows) {
    // Cut at the plot's edges: a window of a large run shows faults that began before it.
    const x0 = xOf(s, Math.max(s.t0, w.from));
    const x1 = Math.max(xOf(s, Math.min(s.t1, w.to)), x0 + 1);
    const cls = faultClass(w.kind);
    const title = `<title>${esc(faultTitle(w))}</title>`;
    if (w.from === w.to) {
      out.push(`<g class="${cls} instant"><line x1="${px(x0)}" x2="${px(x0)}" y1="${top}" y2="${bottom}"/>${title}</g>`);
    } else {
      out.push(`<rect class="${cls}${w.healed ? "" : " unhealed"}" x="${px(x0)}" y="${top}" width="${px(x1 - x0)}" height="${bottom - top}">${title}</rect>`);
    }
    const label = clip(`${w.kind}${w.targets.length ? ` ${w.targets.join(",")}` : ""}`, 40);
    // Roughly 6.5 px per character at 11px; a label near the right edge moves left.
    const wide = label.length * 6.5;
    const lx = Math.max(s.left, Math.min(x0 + 2, s.left + s.width - wide));
    const row = rowEnds.findIndex((end) => end < lx);
    if (row < 0) continue;
    rowEnds[row] = lx + wide + 6;
    const y = top - (labelRows - row - 1) * 12 - 3;
    out.push(`<text class="fault-label ${cls}" x="${px(lx)}" y="${y}">${esc(label)}</text>`);
  }
  return out.join("");
}
