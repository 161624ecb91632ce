// The fairness line of the summary and the wait-against-arrival plot of the page,
// on a hand-written history: A arrives first and is overtaken by B; C's client said
// its place was taken only after D was invoked, so D served first is no overtake.
import { describe, expect, it } from "vitest";
import { analyze } from "../../checker/index.ts";
import { renderReportHtml, renderSummary } from "../../reports/index.ts";
import type { HistoryEvent, HistoryHeader } from "../../store/events.ts";

const header: HistoryHeader = { format: 1, kind: "header", run: "fair", workload: "fenced-write", backend: "etcd", fencing: true };
const ms = (v: number) => v * 1e6;

function acquire(events: Omit<HistoryEvent, "index">[], process: number, owner: string, from: number, to: number, queued?: number): void {
  events.push({ time: ms(from), process, type: "invoke", f: "acquire", key: "k", value: { ttl_ms: 1000 } });
  events.push({ time: ms(to), process, type: "ok", f: "acquire", key: "k", value: { owner, fence: null, ttl_ms: 1000, ...(queued === undefined ? {} : { queued_ms: queued }) } });
}

function history(): HistoryEvent[] {
  const e: Omit<HistoryEvent, "index">[] = [];
  acquire(e, 0, "A", 0, 30);
  acquire(e, 1, "B", 10, 20);
  acquire(e, 2, "C", 100, 150, 20);
  acquire(e, 3, "D", 110, 140);
  return e.sort((a, b) => a.time - b.time).map((x, index) => ({ ...x, index }) as HistoryEvent);
}

const svg = (page: string, cls: string) => {
  const from = page.indexOf(`<svg class="${cls}"`);
  return page.slice(from, page.indexOf("</svg>", from));
};

describe("fairness in the report", () => {
  const events = history();
  const { results } = analyze({ header, events, decisions: null });

  it("marks the overtaken waiter and no other", () => {
    const plot = svg(renderReportHtml({ header, events, decisions: null, results }), "fairness");
    expect(plot.split(`class="pt-overtaken"`).length - 1).toBe(1);
    expect(plot.split(`class="pt-ok"`).length - 1).toBe(3);
    expect(plot).toContain("overtaken by 1 later arrival");
    expect(plot).toContain("its place taken after 20.0 ms");
  });

  it("prints one summary line with the figures", () => {
    const text = renderSummary({ header, results });
    expect(text).toMatch(/fairness: 1 overtake over 4 grants \(0\.25 per grant, 1 waiter overtaken\); wait p50 30\.0 ms, p99 50\.0 ms, max 50\.0 ms/);
  });

  it("prints none without acquires, and n/a for a results file from before fairness", () => {
    const none = renderSummary({ header, results: { ...results, stats: { ...results.stats, ops: {}, fairness: null } } });
    expect(none).not.toContain("fairness");
    const old = renderSummary({ header, results: { ...results, stats: { ...results.stats, fairness: undefined } } });
    expect(old).toContain("fairness: n/a");
  });
});
