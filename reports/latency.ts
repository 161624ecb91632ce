// Acquire latency over time: one point per acquire at its invoke time, its latency
// on a log scale, with the fault windows (the scatter plot of scatter.ts).
// An acquire that never completed is drawn at the latency it had reached when the
// history ended, which is a lower bound, and says so in its tooltip.
import { describeOp } from "./describe.ts";
import type { PageData } from "./page-data.ts";
import { readFigures } from "./results.ts";
import { renderScatter, type Mark } from "./scatter.ts";

export { MAX_POINTS } from "./scatter.ts";

export interface LatencyPlot {
  svg: string;
  notes: string[];
  count: number;
}

const MARK: Record<"ok" | "fail" | "info", Mark> = { ok: "dot", fail: "cross", info: "triangle" };

export function renderLatency(m: PageData): LatencyPlot {
  const acquires = m.ops.filter((o) => o.f === "acquire");
  const fig = readFigures(m.input.results.stats).acquire_latency_ms;
  const { svg, notes } = renderScatter(m, {
    name: "latency",
    label: "acquire latency",
    points: acquires.map((op) => ({
      t: op.invoke.time,
      ms: ((op.completion?.time ?? m.t1) - op.invoke.time) / 1e6,
      cls: `pt-${op.outcome}`,
      mark: MARK[op.outcome],
      title: (brief: boolean) => `${describeOp(op, undefined, brief)}${op.completion ? "" : `${brief ? "; " : "\n"}latency shown is what it had reached when the history ended`}`,
    })),
    // Failed acquires (often quick "busy" answers) under the successes, unknowns on top.
    layers: ["pt-fail", "pt-ok", "pt-info"],
    common: "pt-ok",
    thinned: (kept, distinct) => `${kept} of ${distinct} distinct points are drawn: every failed and unknown acquire, and an even sample of the successful ones.`,
    lines: fig ? [["p50", fig.p50], ["p99", fig.p99]] : [],
  });
  return { svg, notes, count: acquires.length };
}
