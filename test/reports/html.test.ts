import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderReportHtml, writeReport } from "../../reports/index.ts";
import { decisions, events, EVIL, header, results } from "./fixture.ts";
import { tempDir } from "../helpers.ts";

const input = { header, events, decisions, results };
const count = (text: string, needle: string) => text.split(needle).length - 1;
const svg = (page: string, cls: string) => {
  const from = page.indexOf(`<svg class="${cls}"`);
  return page.slice(from, page.indexOf("</svg>", from));
};

describe("renderReportHtml", () => {
  const html = renderReportHtml(input);

  it("shows the verdict and the figures", () => {
    expect(html).toMatch(/<span class="verdict INVALID">INVALID<\/span>fenced-write on redis, fencing on/);
    expect(html).toContain("<b>4.8</b><span>operations per second</span>");
    expect(html).toContain("<b>1</b><span>stale writes refused</span>");
    expect(html).toContain("pause ×1");
  });

  it("draws one lane per client process", () => {
    expect(count(html, `class="lane-label"`)).toBe(3);
    for (const p of ["p0", "p1", "p2"]) expect(html).toContain(`>${p}<title>`);
  });

  it("shades the pause window and labels it with its targets", () => {
    expect(html).toMatch(/<rect class="fault-pause" x="[\d.]+" y="\d+" width="[\d.]+"/);
    expect(html).toContain(">pause worker-0</text>");
    expect(html).toMatch(/pause on worker-0, 0\.020 s – 1\.500 s/);
  });

  it("draws holds, the hatched time after A's lease, and the refused stale write", () => {
    const timeline = svg(html, "timeline");
    expect(count(timeline, `<rect class="hold"`)).toBe(3);
    expect(count(timeline, `<rect class="ext"`)).toBe(1);
    expect(count(timeline, `<line class="w-stale"`)).toBe(1);
    expect(count(timeline, `<line class="w-ok"`)).toBe(3);
    expect(count(timeline, `<circle class="op-info"`)).toBe(1);
    // Operations in flight for 3 px or more: A's write stalled by the pause, the
    // acquire that timed out, and C's 10 ms acquire.
    expect(timeline).toMatch(/<line class="span"[^>]*><title>write fail \(stale-fence\)/);
    expect(count(timeline, `<line class="span"`)).toBe(3);
  });

  it("plots every acquire's latency with the fault window", () => {
    const latency = svg(html, "latency");
    expect(count(latency, `class="pt-ok"`)).toBe(3);
    expect(count(latency, `class="pt-info"`)).toBe(1);
    expect(latency).toContain(`<rect class="fault-pause"`);
  });

  it("lists the witness, quotes its events and decisions, and links it to the timeline both ways", () => {
    expect(html).toContain(`<li id="w0-0">`);
    expect(html).toContain(`href="#tl-w0-0"`);
    expect(html).toMatch(/<g class="witness" id="tl-w0-0"><a href="#w0-0">.*?<rect class="ring".*?<path class="ring decision"/);
    for (const i of [0, 1, 6, 7]) expect(html).toContain(`<td>#${i}</td>`);
    expect(html).toContain("<td>seq 1</td>");
    expect(html).toContain("<td>seq 2</td>");
    expect(html).toContain("completed by #7");
  });

  it("escapes everything that comes from the history, the resource log and the results", () => {
    expect(html).not.toContain("<script>alert");
    expect(html).not.toMatch(/<\/script>"&'/);
    expect(count(html, "<script")).toBe(1); // the page's own
    expect(html).toContain("A&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;&#39;");
    expect(html).toContain("run-1&lt;script&gt;");
    // Every value inside a tooltip, a table cell and the title element was escaped.
    expect(html).toMatch(/<title>INVALID · fenced-write on redis · run-1&lt;script&gt;/);
  });

  it("escapes fault targets, operation names, error codes and anomaly names too", () => {
    const hostile = events.map((e) => e.process === "nemesis" ? { ...e, value: { targets: [EVIL] } }
      : e.index === 11 ? { ...e, error: EVIL } : e.index === 20 ? { ...e, f: EVIL } : e);
    hostile.push({ index: 22, time: 2_200e6, process: "nemesis", type: "info", f: EVIL });
    const page = renderReportHtml({ ...input, events: hostile, results: { ...results, anomaly_types: [EVIL], anomalies: { [EVIL]: [{ explanation: EVIL, events: [11, 22] }] } } });
    expect(page).not.toContain("<script>alert");
    expect(count(page, "<script")).toBe(1);
  });

  it("needs no network", () => {
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/\ssrc=|<link\b|@import|url\((?!#)/);
  });

  it("renders without a resource log, with its absence said", () => {
    const page = renderReportHtml({ ...input, decisions: null });
    expect(page).toContain("no resource log");
    expect(page).toContain("not in the resource log (no resource log)");
  });

  it("renders an empty history and results with no stats", () => {
    const page = renderReportHtml({ header, events: [], decisions: null, results: { valid: "unknown", anomaly_types: [], anomalies: {}, stats: {} } });
    expect(page).toContain(`class="verdict UNKNOWN"`);
    expect(page).toContain("No acquire in this history.");
    expect(page).toContain("No nemesis events in this history.");
  });

  it("orders events by (time, index) as a killed run may leave them", () => {
    const shuffled = [...events].reverse();
    expect(renderReportHtml({ ...input, events: shuffled })).toBe(html);
  });
});

describe("writeReport", () => {
  it("writes report.html in the run directory and leaves no temporary file", async () => {
    const dir = tempDir("fencecheck-report-");
    await writeReport(dir, input);
    expect(await readFile(join(dir, "report.html"), "utf8")).toBe(renderReportHtml(input));
    expect(await readdir(dir)).toEqual(["report.html"]);
  });
});
