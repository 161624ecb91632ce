// Fairness in the report: results.json's `stats.fairness`, read without trusting it,
// and a plot of each granted acquire's wait against its arrival (the scatter plot
// of scatter.ts), its point marked when a later arrival was served first. The marks
// come from the history with the checker's own count (checker/fairness.ts), so the
// plot and the figures agree.
import { fairnessOf, placedAt, type FairnessStats, type Waiter } from "../checker/index.ts";
import { describeOp } from "./describe.ts";
import { esc, millis } from "./format.ts";
import type { PageData } from "./page-data.ts";
import type { Op } from "./ops.ts";
import { renderScatter } from "./scatter.ts";

export type FairnessFigures = Pick<FairnessStats, "overtakes" | "acquires_granted" | "overtake_rate" | "overtaken" | "wait_ms">;

const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The fairness figures; null when the run had no acquire, undefined when results.json has none usable. */
export function readFairness(stats: unknown): FairnessFigures | null | undefined {
  const f = isObj(stats) ? stats.fairness : undefined;
  if (f === null) return null;
  if (!isObj(f) || !isNum(f.overtakes) || !isNum(f.acquires_granted) || !isNum(f.overtake_rate)) return undefined;
  const w = f.wait_ms;
  const wait_ms = isObj(w) && isNum(w.p50) && isNum(w.p99) && isNum(w.max) ? { p50: w.p50, p99: w.p99, max: w.max } : null;
  return { overtakes: f.overtakes, acquires_granted: f.acquires_granted, overtake_rate: f.overtake_rate, overtaken: isNum(f.overtaken) ? f.overtaken : 0, wait_ms };
}

const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? "" : "s"}`;

/** One line for the terminal summary, or null when the run had no acquire. */
export function fairnessLine(stats: unknown): string | null {
  const f = readFairness(stats);
  if (f === null) return null;
  if (f === undefined) return "fairness: n/a";
  const w = f.wait_ms;
  return `fairness: ${count(f.overtakes, "overtake")} over ${count(f.acquires_granted, "grant")} (${f.overtake_rate} per grant, ${count(f.overtaken, "waiter")} overtaken); ` +
    `wait ${w ? `p50 ${millis(w.p50)}, p99 ${millis(w.p99)}, max ${millis(w.max)}` : "n/a"}`;
}

/** The granted acquires of the history with how many later arrivals overtook each. */
function overtakes(m: PageData): { op: Op; wait: number; queued: number; by: number }[] {
  const ops = m.ops.filter((o) => o.f === "acquire" && o.key !== undefined);
  const keys = new Map<string, number>();
  const waiters: Waiter[] = ops.map((o) => {
    let key = keys.get(o.key!);
    if (key === undefined) keys.set(o.key!, (key = keys.size));
    const granted = o.outcome === "ok" && o.completion ? o.completion.time : NaN;
    return { key, invoke: o.invoke.time, placed: placedAt(o.invoke.time, granted, o.completion?.value?.queued_ms), granted };
  });
  const { overtakenBy } = fairnessOf(waiters);
  const out: { op: Op; wait: number; queued: number; by: number }[] = [];
  waiters.forEach((w, i) => {
    if (!Number.isNaN(w.granted)) out.push({ op: ops[i], wait: (w.granted - w.invoke) / 1e6, queued: (w.placed - w.invoke) / 1e6, by: overtakenBy[i] });
  });
  return out;
}

const swatch = (inner: string, label: string) => `<span><svg width="24" height="14">${inner}</svg>${label}</span>`;

/** The page's fairness section, after its heading. */
export function renderFairness(m: PageData): string {
  const granted = overtakes(m);
  if (granted.length === 0) return `<p class="note">No acquire was granted in this history.</p>`;
  const f = readFairness(m.input.results.stats);
  const { svg, notes } = renderScatter(m, {
    name: "fairness",
    label: "wait of each granted acquire against its arrival",
    points: granted.map((g) => ({
      t: g.op.invoke.time,
      ms: g.wait,
      cls: g.by > 0 ? "pt-overtaken" : "pt-ok",
      mark: g.by > 0 ? "triangle" : "dot",
      title: (brief: boolean) => `${describeOp(g.op, undefined, brief)}${brief ? "; " : "\n"}waited ${millis(g.wait)}` +
        (g.queued > 0 ? `, its place taken after ${millis(g.queued)}` : "") +
        (g.by > 0 ? `; overtaken by ${g.by} later arrival${g.by === 1 ? "" : "s"}` : ""),
    })),
    layers: ["pt-ok", "pt-overtaken"],
    common: "pt-ok",
    thinned: (kept, distinct) => `${kept} of ${distinct} distinct points are drawn: every overtaken waiter, and an even sample of the others.`,
    lines: f?.wait_ms ? [["p50", f.wait_ms.p50], ["p99", f.wait_ms.p99]] : [],
  });
  const figures = (f ? `<p>${count(f.overtakes, "overtake")} over ${count(f.acquires_granted, "grant")} (${f.overtake_rate} per grant); ${count(f.overtaken, "waiter")} overtaken.</p>` : "") +
    `<p class="note">An overtake: an acquire of the same key, invoked after a waiter had certainly taken its place (its client's queued_ms after its invoke, or its invoke where the client keeps no queue), was granted before that waiter. Only waiters that were granted in the end count.</p>`;
  const legend = `<div class="legend">${[
    swatch(`<circle class="pt-ok" cx="12" cy="7" r="3"/>`, "served in its turn"),
    swatch(`<path class="pt-overtaken" d="M12 3l4 7h-8z"/>`, "overtaken: a later arrival was served first"),
    swatch(`<line class="pct" x1="1" x2="23" y1="7" y2="7"/>`, "p50 / p99 wait from results"),
  ].join("")}</div>`;
  return `${figures}${legend}${notes.map((n) => `<p class="note">${esc(n)}</p>`).join("")}<div class="scroll">${svg}</div>`;
}
