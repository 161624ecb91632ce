// The report of format 2's lock kinds: hand-written histories (kinds-fixtures.ts)
// checked as `fencecheck check` checks a stored run (checkAndReport), and the
// report.html it wrote read back: read and write holds drawn apart, a reentrant
// hold's re-entries nested with their depths, a semaphore's permit level with its
// overflow in the anomaly colour, withdrawn waits, and liveness findings listed
// apart from the anomalies. A mutex's run draws none of it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkAndReport } from "../../cli/check-run.ts";
import { renderReportHtml, reportRun } from "../../reports/index.ts";
import { writeRun } from "../checker/build.ts";
import { decisions, events, header, results } from "./fixture.ts";
import { cancelHistory, reentrantHistory, rwHistory, semaphoreHistory } from "./kinds-fixtures.ts";
import type { History } from "../checker/build.ts";

const count = (text: string, needle: string) => text.split(needle).length - 1;
const timelineOf = (page: string) => {
  const from = page.indexOf(`<svg class="timeline"`);
  return page.slice(from, page.indexOf("</svg>", from));
};
/** The numeric attributes of the first element of `tag` with class `cls` after `from`. */
function attrs(svg: string, tag: string, cls: string, from = 0): Record<string, number> {
  const at = svg.indexOf(`<${tag} class="${cls}"`, from);
  if (at < 0) throw new Error(`no <${tag} class="${cls}">`);
  const el = svg.slice(at, svg.indexOf(">", at));
  return Object.fromEntries([...el.matchAll(/ (\w+)="(-?[\d.]+)"/g)].map(([, k, v]) => [k, Number(v)]));
}

/** The bar of the hold of `owner`: the rect whose tooltip names it. */
function holdBar(svg: string, owner: string): Record<string, number> {
  const named = svg.indexOf(`<title>hold &quot;${owner}&quot;`);
  return attrs(svg, "rect", "hold", svg.lastIndexOf(`<rect class="hold"`, named));
}

async function report(h: History, liveness?: "strict") {
  const dir = writeRun(h);
  const out = await checkAndReport(dir, liveness ? { liveness } : {});
  const page = readFileSync(join(dir, "report.html"), "utf8");
  return { dir, out, page, svg: timelineOf(page) };
}

describe("the report of an rw lock", () => {
  it("draws read holds light and lettered R, the write hold solid and lettered W, and says which in the tooltip", async () => {
    const { out, page, svg } = await report(rwHistory());
    expect(out.results.anomaly_types).toEqual(["rw-violation"]);
    expect(count(svg, `<rect class="hold read"`)).toBe(2);
    expect(count(svg, `<rect class="hold write"`)).toBe(1);
    expect(svg.match(/<text class="bar-label"[^>]*>R<\/text>/g)).toHaveLength(2);
    expect(svg.match(/<text class="bar-label"[^>]*>W<\/text>/g)).toHaveLength(1);
    expect(svg).toContain("read hold (R) &quot;r1&quot; on key &quot;k&quot;");
    expect(svg).toContain("write hold (W) &quot;w1&quot;");
    expect(page).toContain("read hold (R): readers share");
    expect(page).toMatch(/<h3>rw-violation <span class="count">1 witness<\/span>/);
  });
});

describe("the report of a semaphore", () => {
  it("draws the permit level above the lanes, red where more holds than permits were certainly valid", async () => {
    const { out, page, svg } = await report(semaphoreHistory(2));
    expect(out.results.anomaly_types).toEqual(["semaphore-overflow"]);
    expect(svg).toContain(`<path class="lvl-certain"`);
    expect(svg).toContain(`>2 permits</text>`);
    expect(count(svg, `<rect class="lvl-over"`)).toBe(1);
    expect(svg).toMatch(/3 holds certainly valid at once on key k around 0\.3\d\d s – 0\.6\d\d s; the semaphore has 2 permits/);
    // The overflow starts where the third hold's bar does (its grant) and ends at the
    // first release's invoke (600 ms), before that hold's bar ends (its release's ok).
    const over = attrs(svg, "rect", "lvl-over");
    const third = holdBar(svg, "c"), first = holdBar(svg, "a");
    expect(Math.abs(over.x - third.x)).toBeLessThanOrEqual(1.5);
    expect(over.x + over.width).toBeLessThan(first.x + first.width);
    // Above the lanes: below the axis, above the first lane's bar.
    expect(over.y + over.height).toBeLessThan(first.y);
    expect(page).toContain("semaphore: holds certainly valid at once");
  });

  it("with enough permits: the level, the permits' line, and nothing red", async () => {
    const { out, svg } = await report(semaphoreHistory(3));
    expect(out.results.valid).toBe(true);
    expect(svg).toContain(`>3 permits</text>`);
    expect(svg).toContain(`<path class="lvl-certain"`);
    expect(svg).not.toContain(`class="lvl-over"`);
  });

  it("a downsampled report draws the level in the window around the overflow", async () => {
    const dir = writeRun(semaphoreHistory(2));
    const { results } = await checkAndReport(dir);
    const out = await reportRun(dir, results, { fullUpTo: 4 });
    expect(out.downsampled).toBe(true);
    const page = readFileSync(join(dir, "report.html"), "utf8");
    expect(page).toContain(`<rect class="lvl-over"`);
  });
});

describe("the report of a reentrant lock", () => {
  it("nests each re-entry inside its hold's bar, deeper inside shallower, labelled with its depth", async () => {
    const { out, svg } = await report(reentrantHistory());
    expect(out.results.valid).toBe(true);
    const d2 = attrs(svg, "rect", "entry d2"), d3 = attrs(svg, "rect", "entry d3");
    const hold = attrs(svg, "rect", "hold");
    expect(count(svg, `<rect class="entry d2"`)).toBe(1);
    expect(count(svg, `<rect class="entry d3"`)).toBe(1);
    // Nested: d3 within d2 within the hold, in time and in height.
    expect(d2.x).toBeGreaterThan(hold.x);
    expect(d3.x).toBeGreaterThan(d2.x);
    expect(d3.x + d3.width).toBeLessThan(d2.x + d2.width);
    expect(d2.x + d2.width).toBeLessThan(hold.x + hold.width);
    expect(d3.y).toBeGreaterThan(d2.y);
    expect(d3.height).toBeLessThan(d2.height);
    expect(svg).toMatch(/<g class="reentry"><rect class="entry d2"[^>]*\/><text class="bar-label"[^>]*>2<\/text>/);
    expect(svg).toMatch(/<g class="reentry"><rect class="entry d3"[^>]*\/><text class="bar-label"[^>]*>3<\/text>/);
    expect(svg).toContain("re-entry at depth 3 of hold &quot;a&quot;");
  });

  it("ends the hold at its outermost release, not at the first inner one", async () => {
    const { svg } = await report(reentrantHistory());
    expect(svg).toContain("re-entered 2 times, to depth 3 at most");
    // Releases complete at 0.510 s (depth 3), 0.660 s (depth 2), 0.860 s (the hold).
    expect(svg).toMatch(/hold &quot;a&quot;[^<]*release #\d+ ok at 0\.860 s/);
  });
});

describe("withdrawn waits and liveness", () => {
  it("marks cancelled and cancel-unknown acquires, and lists stuck-lock as liveness, not counted", async () => {
    const { out, page, svg } = await report(cancelHistory());
    expect(out.results.valid).toBe(true);
    expect(count(svg, `<path class="op-cancel"`)).toBe(1);
    expect(count(svg, `<path class="op-cancel-unknown"`)).toBe(1);
    // The waiter that timed out behind the dead entry is an ordinary failure.
    expect(count(svg, `<circle class="op-fail"`)).toBe(1);
    expect(page).toContain(`<p class="none">No anomalies found.</p>`);
    expect(page).toMatch(/<section class="anomaly liveness"><h3>stuck-lock <span class="tag liveness">liveness · not counted<\/span> <span class="count">1 finding<\/span>/);
    expect(page).toContain("do not count toward the verdict unless the run is checked with <code>--liveness strict</code>");
    expect(svg).toMatch(/<g class="witness liveness" id="tl-w0-0">/);
    expect(page).toContain("1 + 1</b><span>acquires withdrawn: cancelled + cancel-unknown");
  });

  it("under --liveness strict: the run is invalid and the finding is listed once, as counted", async () => {
    const { out, page } = await report(cancelHistory(), "strict");
    expect(out.results.valid).toBe(false);
    expect(page).toContain(`<span class="verdict INVALID">`);
    expect(count(page, `<section class="anomaly`)).toBe(1);
    expect(page).toContain("liveness · counted (--liveness strict)");
    expect(page).not.toContain("No anomalies found.");
  });
});

describe("a mutex's run", () => {
  it("draws none of the lock kinds' marks", () => {
    const svg = timelineOf(renderReportHtml({ header, events, decisions, results }));
    for (const cls of ["hold read", "hold write", "entry", "bar-label", "lvl-", "op-cancel", "witness liveness"]) expect(svg).not.toContain(`class="${cls}`);
  });
});
