// The timeline: run time across, one lane per client process down. Holds are bars
// from the acquire's `ok` to the release's completion; the part after the lease was
// certainly over is hatched, because a client acting there is how stale writes
// happen. Writes are ticks coloured by what the resource did; failed and unknown
// operations are dots. Fault windows are shaded across every lane, and each witness
// gets a highlight group the anomaly list links to (CSS `:target` makes it stand out).
//
// Big histories: marks of one kind that fall on the same pixel of a lane merge into
// one (its tooltip says how many); past MAX_MARKS, `thin` gives up more detail step by
// step and the page says which. Witness highlights are always drawn.
import { esc, seconds } from "./format.ts";
import { describeHold, describeOp, describeReentry } from "./describe.ts";
import { cancelOf } from "./kinds.ts";
import { assignLanes, type Lanes } from "./lanes.ts";
import { labelWidth, renderLaneFaults, renderLaneLabels } from "./lane-workers.ts";
import { levelStrips } from "./levels.ts";
import type { PageData } from "./page-data.ts";
import { heldUntil, type Op } from "./ops.ts";
import { faultLayer, px, timeAxis, xOf, type TimeScale } from "./svg.ts";

export const MAX_LANES = 200;
export const MAX_MARKS = 20_000;
/** Past this many marks, tooltips shrink to one line each to keep the page loadable. */
const FULL_TITLES = 4_000;
const RIGHT = 24, AXIS = 18, LABEL_ROWS = 3, BOTTOM = 12;
const TOP = AXIS + LABEL_ROWS * 12 + 4;

type Shape = "bar" | "ext" | "entry" | "tick" | "dot" | "cross" | "span";
interface Mark {
  /** Lower draws first when marks must be left out. */
  pri: number;
  lane: number;
  x0: number;
  x1: number;
  shape: Shape;
  cls: string;
  /** How many marks of this kind this one stands for, once merged. */
  n: number;
  /** Drawn inside a bar wide enough for it (an rw hold's R or W, a re-entry's depth). */
  label?: string;
  /** A re-entry's depth (2 and deeper), drawn nested inside its hold's bar. */
  depth?: number;
  title: (brief: boolean) => string;
}

export interface Timeline {
  svg: string;
  notes: string[];
  keys: string[];
  /** Marks of the lock kinds beyond the mutex drawn here, for the legend (kindLegend). */
  kinds: Set<KindMark>;
}

export type KindMark = "read" | "write" | "entry" | "cancelled" | "cancel-unknown" | "levels" | "lane-fault";

function plotWidth(m: PageData, lanes: Lanes): number {
  const seconds = (m.t1 - m.t0) / 1e9;
  const perLane = new Map<number, number>();
  for (const op of m.ops) {
    const lane = lanes.of.get(op.process) ?? 0;
    perLane.set(lane, (perLane.get(lane) ?? 0) + 1);
  }
  const busiest = Math.max(0, ...perLane.values());
  // About 6 px per operation of the busiest lane and 20 px per second, within a
  // width a browser still scrolls smoothly.
  return Math.round(Math.min(8000, Math.max(1100, seconds * 20, busiest * 6)));
}

const laneHeight = (lanes: number) => (lanes <= 20 ? 22 : lanes <= 60 ? 12 : Math.max(5, Math.floor(1200 / lanes)));

function writeClass(op: Op): string {
  if (op.outcome === "ok") return "w-ok";
  if (op.outcome === "info") return "w-info";
  return op.completion?.error === "stale-fence" ? "w-stale" : "w-fail";
}

export function renderTimeline(m: PageData): Timeline {
  const lanes = assignLanes(m.events, MAX_LANES);
  const laneCount = lanes.members.length;
  const width = plotWidth(m, lanes);
  // A reentrant hold's bar has its re-entries nested inside: a little more room for them.
  const lh = laneHeight(laneCount) + (m.lock?.lock === "reentrant" && laneCount <= 20 ? 6 : 0);
  const LEFT = labelWidth(m);
  const scale: TimeScale = { t0: m.t0, t1: m.t1, left: LEFT, width };
  // A window of a large run is drawn with t0/t1 narrowed to it: what starts before
  // (a carried-in hold) or ends after it is cut at its edge.
  const x = (t: number) => xOf(scale, Math.min(m.t1, Math.max(m.t0, t)));
  const keys = [...new Set(m.holds.map((h) => h.key ?? ""))].sort();
  const keyClass = (key: string | undefined) => (keys.length > 1 && keys.length <= 8 ? `hold k${keys.indexOf(key ?? "")}` : "hold");

  const raw: Mark[] = [];
  let maxDepth = 1;
  for (const h of m.holds) {
    const lane = lanes.of.get(h.process);
    const ok = h.acquire.completion;
    if (lane === undefined || !ok) continue;
    // Never released: drawn to the end of its lease or its last operation (heldUntil).
    const end = heldUntil(h, m.t1);
    const solidEnd = h.leaseEnd === null ? end : Math.min(end, h.leaseEnd);
    const title = (brief: boolean) => describeHold(h, end, brief);
    // An rw hold: a read's bar is light, a write's solid, each lettered R or W.
    const mode = h.mode === undefined ? "" : ` ${h.mode}`;
    const label = h.mode === "read" ? "R" : h.mode === "write" ? "W" : undefined;
    if (solidEnd > ok.time || end <= ok.time) {
      raw.push({ pri: 2, lane, x0: x(ok.time), x1: Math.max(x(solidEnd), x(ok.time) + 1.5), shape: "bar", cls: keyClass(h.key) + mode, n: 1, title, label });
    }
    if (end > solidEnd) {
      raw.push({ pri: 2, lane, x0: x(Math.max(solidEnd, ok.time)), x1: x(end), shape: "ext", cls: "ext" + mode, n: 1, title });
    }
    for (const entry of h.entries ?? []) {
      const from = entry.acquire.completion?.time ?? ok.time;
      const to = Math.min(end, entry.release?.completion?.time ?? entry.release?.invoke.time ?? end);
      maxDepth = Math.max(maxDepth, entry.depth);
      raw.push({
        pri: 2, lane, x0: x(from), x1: Math.max(x(to), x(from) + 1.5), shape: "entry", cls: `entry d${Math.min(entry.depth, 5)}`, n: 1,
        title: (brief: boolean) => describeReentry(h, entry, brief), label: String(entry.depth), depth: entry.depth,
      });
    }
  }
  for (const op of m.ops) {
    const lane = lanes.of.get(op.process);
    if (lane === undefined) continue;
    const c = op.completion;
    const at = c?.time ?? m.t1;
    const title = (brief: boolean) => describeOp(op, m.decisionOf.get(op), brief);
    if (x(at) - x(op.invoke.time) >= 3) {
      raw.push({ pri: 4, lane, x0: x(op.invoke.time), x1: x(at), shape: "span", cls: "span", n: 1, title });
    }
    if (op.f === "write") {
      const cls = writeClass(op);
      const t = m.decisionOf.get(op)?.time ?? at;
      raw.push({ pri: cls === "w-ok" ? 3 : 1, lane, x0: x(t), x1: x(t), shape: "tick", cls, n: 1, title });
    } else if (op.outcome !== "ok" || (op.f === "release" && c?.value?.released === false)) {
      // A withdrawn wait (format 2's cancel) is a cross: the client gave up, nothing failed.
      const cancel = op.outcome === "ok" ? null : cancelOf(op);
      if (cancel !== null) raw.push({ pri: 1, lane, x0: x(at), x1: x(at), shape: "cross", cls: cancel === "cancelled" ? "op-cancel" : "op-cancel-unknown", n: 1, title });
      else raw.push({ pri: 1, lane, x0: x(at), x1: x(at), shape: "dot", cls: op.outcome === "info" ? "op-info" : "op-fail", n: 1, title });
    }
  }
  const { marks: drawn, notes } = thin(raw);
  if (lanes.packed) {
    notes.push(`${lanes.of.size} client processes are drawn in ${laneCount} lanes: processes whose lifetimes do not overlap share a lane.`);
  }
  const brief = drawn.length > FULL_TITLES;
  const levels = levelStrips(m, scale);
  if (levels) notes.push(...levels.notes);
  // A semaphore's permit levels go between the axis and the first lane.
  const lanesTop = TOP + (levels?.height ?? 0);

  const laneY = (lane: number) => lanesTop + lane * lh;
  const bottom = lanesTop + laneCount * lh;
  const height = bottom + BOTTOM;
  const out: string[] = [];
  out.push(`<svg class="timeline" width="${LEFT + width + RIGHT}" height="${height}" viewBox="0 0 ${LEFT + width + RIGHT} ${height}" role="img" aria-label="timeline">`);
  out.push(`<defs><pattern id="hatch" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="2" height="5" class="hatch"/></pattern></defs>`);
  out.push(renderLaneLabels(m, lanes, laneY, lh, LEFT, width));
  out.push(faultLayer(m.windows, scale, TOP, bottom, LABEL_ROWS));
  const laneFaults = renderLaneFaults(m, lanes, x, laneY, lh);
  out.push(laneFaults);
  out.push(`<g class="axis">${timeAxis(scale, AXIS, bottom, Math.max(4, Math.floor(width / 110)))}</g>`);
  if (levels) out.push(levels.draw(TOP));
  out.push(`<g class="marks">`);
  for (const mk of drawn.sort((a, b) => shapeOrder(a.shape) - shapeOrder(b.shape) || (a.depth ?? 0) - (b.depth ?? 0))) out.push(drawMark(mk, laneY(mk.lane), lh, brief, maxDepth));
  out.push(`</g>`);
  out.push(renderWitnesses(m, lanes, x, laneY, lh, TOP, bottom));
  out.push(`</svg>`);
  const kinds = new Set<KindMark>();
  if (laneFaults) kinds.add("lane-fault");
  if (m.lock !== null || drawn.some((mk) => mk.shape === "cross")) {
    for (const mk of drawn) {
      if (mk.shape === "entry") kinds.add("entry");
      else if (mk.shape === "cross") kinds.add(mk.cls === "op-cancel" ? "cancelled" : "cancel-unknown");
      else if (mk.shape === "bar" && mk.label !== undefined) kinds.add(mk.label === "R" ? "read" : "write");
    }
    if (levels) kinds.add("levels");
  }
  return { svg: out.join(""), notes, keys: keys.length > 1 && keys.length <= 8 ? keys : [], kinds };
}

/**
 * Marks narrower than `res` px that share a lane, kind and `res`-px column, merged
 * into one. Wide bars and spans stay as they are.
 */
function mergeAt(raw: readonly Mark[], res: number): { marks: Mark[]; merged: number } {
  const marks: Mark[] = [];
  const buckets = new Map<string, Mark>();
  let merged = 0;
  for (const mk of raw) {
    if (mk.x1 - mk.x0 >= Math.max(2, res) && mk.shape !== "tick" && mk.shape !== "dot") { marks.push(mk); continue; }
    const key = `${mk.lane}|${mk.cls}|${mk.shape}|${Math.floor(mk.x0 / res)}`;
    const seen = buckets.get(key);
    if (seen) { seen.n += mk.n; merged += mk.n; continue; }
    const copy = { ...mk };
    buckets.set(key, copy);
    marks.push(copy);
  }
  return { marks, merged };
}

/**
 * Fewer marks than MAX_MARKS, giving up detail in the order that costs least: merge
 * marks on one pixel, drop in-flight spans, merge over wider columns, and last leave
 * out the least telling marks. Each step taken is said in a note on the page.
 */
function thin(raw: readonly Mark[]): { marks: Mark[]; notes: string[] } {
  const notes: string[] = [];
  let res = 1;
  let { marks, merged } = mergeAt(raw, res);
  if (marks.length > MAX_MARKS) {
    const spans = raw.filter((mk) => mk.shape === "span").length;
    raw = raw.filter((mk) => mk.shape !== "span");
    ({ marks, merged } = mergeAt(raw, res));
    if (spans) notes.push(`${spans} in-flight operation spans are not drawn, to keep the page small.`);
  }
  while (marks.length > MAX_MARKS && res < 16) {
    res *= 2;
    ({ marks, merged } = mergeAt(raw, res));
  }
  if (merged > 0) {
    notes.push(`${merged} marks fell within ${res === 1 ? "the same pixel" : `the same ${res} px`} of a lane as another of their kind` +
      " and are drawn as one; the tooltip of such a mark says how many it stands for.");
  }
  if (marks.length > MAX_MARKS) {
    notes.push(`The history is too large to draw every mark: ${MAX_MARKS} of ${marks.length} are drawn` +
      " (failed and unknown operations and stale writes first, then holds, then accepted writes).");
    marks = [...marks].sort((a, b) => a.pri - b.pri).slice(0, MAX_MARKS);
  }
  return { marks, notes };
}

// Spans under bars under re-entries (shallow to deep) under ticks and dots, so the small marks stay visible.
const shapeOrder = (s: Shape) => ({ span: 0, bar: 1, ext: 1, entry: 1.5, tick: 2, dot: 3, cross: 3 })[s];

/** A letter or number inside a bar, where the bar has room for it and the page is small enough for text per mark. */
function barLabel(mk: Mark, cy: number, h: number, brief: boolean): string {
  if (mk.label === undefined || brief || mk.n > 1 || h < 6 || mk.x1 - mk.x0 < 6 * mk.label.length + 4) return "";
  return `<text class="bar-label" x="${px(mk.x0 + 2)}" y="${px(cy + Math.min(9, h) * 0.36)}" font-size="${px(Math.min(9, h))}">${esc(mk.label)}</text>`;
}

function drawMark(mk: Mark, y: number, lh: number, brief: boolean, maxDepth: number): string {
  const more = mk.n > 1 ? `\n(+${mk.n - 1} more like it here)` : "";
  const title = `<title>${esc(mk.title(brief) + more)}</title>`;
  switch (mk.shape) {
    case "bar":
    case "ext":
      if (mk.label !== undefined) {
        const rect = `<rect class="${mk.cls}" x="${px(mk.x0)}" y="${px(y + lh * 0.2)}" width="${px(Math.max(1.5, mk.x1 - mk.x0))}" height="${px(lh * 0.6)}"/>`;
        return `<g class="bar">${rect}${barLabel(mk, y + lh / 2, lh * 0.6, brief)}${title}</g>`;
      }
      return `<rect class="${mk.cls}" x="${px(mk.x0)}" y="${px(y + lh * 0.2)}" width="${px(Math.max(1.5, mk.x1 - mk.x0))}" height="${px(lh * 0.6)}">${title}</rect>`;
    case "entry": {
      // Nested inside the hold's bar, each depth inset further: the deepest is innermost.
      const step = (lh * 0.6) / (2 * maxDepth);
      const inset = ((mk.depth ?? 2) - 1) * step;
      const h = lh * 0.6 - 2 * inset;
      const rect = `<rect class="${mk.cls}" x="${px(mk.x0)}" y="${px(y + lh * 0.2 + inset)}" width="${px(Math.max(1.5, mk.x1 - mk.x0))}" height="${px(Math.max(1, h))}"/>`;
      return `<g class="reentry">${rect}${barLabel(mk, y + lh / 2, h + 2 * step, brief)}${title}</g>`;
    }
    case "cross": {
      const r = Math.min(3.5, lh * 0.25), cx = mk.x0, cy = y + lh / 2;
      return `<path class="${mk.cls}" d="M${px(cx - r)} ${px(cy - r)}L${px(cx + r)} ${px(cy + r)}M${px(cx + r)} ${px(cy - r)}L${px(cx - r)} ${px(cy + r)}">${title}</path>`;
    }
    case "tick":
      return `<line class="${mk.cls}" x1="${px(mk.x0)}" x2="${px(mk.x0)}" y1="${px(y + 1)}" y2="${px(y + lh - 1)}">${title}</line>`;
    case "dot":
      // Failed acquires are common under contention; smaller dots keep them from
      // drowning the rarer unknown outcomes.
      return `<circle class="${mk.cls}" cx="${px(mk.x0)}" cy="${px(y + lh / 2)}" r="${px(Math.min(mk.cls === "op-fail" ? 2.8 : 4, lh * 0.3))}">${title}</circle>`;
    case "span":
      return `<line class="span" x1="${px(mk.x0)}" x2="${px(mk.x1)}" y1="${px(y + lh * 0.5)}" y2="${px(y + lh * 0.5)}">${title}</line>`;
  }
}

/** One group per witness, id `tl-w<type>-<n>`, linking back to its entry in the list. */
function renderWitnesses(m: PageData, lanes: Lanes, x: (t: number) => number, laneY: (l: number) => number, lh: number, top: number, bottom: number): string {
  const out: string[] = [];
  m.groups.forEach((g, gi) => g.witnesses.forEach((w, wi) => {
    const rings: string[] = [];
    let lo = Infinity, hi = -Infinity;
    const seenOps = new Set<Op>();
    for (const index of w.events) {
      const e = m.eventAt.get(index);
      if (!e) continue;
      const op = m.opOfEvent.get(index);
      const from = op ? op.invoke.time : e.time;
      const to = op ? (op.completion?.time ?? m.t1) : e.time;
      lo = Math.min(lo, from); hi = Math.max(hi, to);
      const lane = typeof e.process === "number" ? lanes.of.get(e.process) : undefined;
      if (lane === undefined || (op && seenOps.has(op))) continue;
      if (op) seenOps.add(op);
      const x0 = x(from) - 3, x1 = Math.max(x(to), x(from)) + 3;
      rings.push(`<rect class="ring" x="${px(x0)}" y="${px(laneY(lane) + 0.5)}" width="${px(x1 - x0)}" height="${px(Math.max(2, lh - 1))}"/>`);
    }
    for (const seq of w.seqs) {
      const d = m.decisionAt.get(seq);
      if (!d) continue;
      lo = Math.min(lo, d.time); hi = Math.max(hi, d.time);
      const lane = lanes.of.get(d.process);
      if (lane === undefined) continue;
      const cx = x(d.time), cy = laneY(lane) + lh / 2, r = Math.max(3, Math.min(6, lh / 2));
      rings.push(`<path class="ring decision" d="M${px(cx)} ${px(cy - r)}L${px(cx + r)} ${px(cy)}L${px(cx)} ${px(cy + r)}L${px(cx - r)} ${px(cy)}Z"/>`);
    }
    if (lo > hi) return;
    const x0 = x(lo) - 4, x1 = x(hi) + 4;
    const title = `${g.type} witness ${wi + 1} of ${g.witnesses.length} (${seconds(lo)} – ${seconds(hi)}): ${w.explanation}`;
    out.push(`<g class="witness${g.liveness ? " liveness" : ""}" id="tl-w${gi}-${wi}"><a href="#w${gi}-${wi}"><rect class="band" x="${px(x0)}" y="${top}" width="${px(x1 - x0)}" height="${bottom - top}"/>${rings.join("")}<title>${esc(title)}</title></a></g>`);
  }));
  return `<g class="witnesses">${out.join("")}</g>`;
}
