import { describe, expect, it } from "vitest";
import { renderReportHtml, renderSummary } from "../../reports/index.ts";
import { synthetic } from "./synthetic.ts";

describe("large histories", () => {
  it("renders 100k events in reasonable time and size", () => {
    const run = synthetic({ events: 100_000, clients: 50, keys: 4, fencing: false });
    expect(run.events.length).toBeGreaterThanOrEqual(100_000);
    const started = performance.now();
    const html = renderReportHtml(run);
    const took = performance.now() - started;
    expect(took).toBeLessThan(15_000);
    expect(html.length).toBeLessThan(10_000_000);
    expect(html).toContain(`<g class="witness" id="tl-w0-0">`);
    expect(renderSummary(run)).toMatch(/INVALID/);
    console.log(`100k events: ${Math.round(took)} ms, ${(html.length / 1e6).toFixed(1)} MB`);
  }, 60_000);

  it("packs more processes than lanes and says so", () => {
    const run = synthetic({ events: 20_000, clients: 250, keys: 1, seed: 7 });
    const html = renderReportHtml(run);
    expect(html).toMatch(/\d+ client processes are drawn in \d+ lanes/);
  }, 60_000);
});
