// report.html of a large run (reports/index.ts reportRun): past the threshold it is
// built in two streaming passes and says at the top that it is downsampled; every
// witness still links to a window drawn in full that holds the events it cites.
// Up to the threshold the page is exactly what the in-memory renderer draws.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateRun } from "../../bench/checker-history.ts";
import { checkAndReport } from "../../cli/check-run.ts";
import { digestRun, locate } from "../../reports/digest.ts";
import { faultWindows, pairOps, renderReportHtml, reportRun } from "../../reports/index.ts";
import { anomalyGroups } from "../../reports/results.ts";
import { planWindows, readWindows } from "../../reports/windows.ts";
import type { Results } from "../../store/events.ts";
import { readHistory, readResourceLog } from "../../store/reader.ts";

const dirs: string[] = [];
const newDir = async (): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), "report-downsampled-"));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const ids = (page: string, re: RegExp): string[] => [...page.matchAll(re)].map((m) => m[1]);

describe("a large run's report", () => {
  let dir: string;
  let page: string;
  let results: Results;

  beforeAll(async () => {
    dir = await newDir();
    // Fencing off: stale writes are accepted, so there are witnesses to link.
    generateRun(dir, { events: 60_000, seed: 3, keys: 4, clients: 20, workers: 4, fencing: false });
    const out = await checkAndReport(dir);
    results = out.results;
    page = await readFile(join(dir, "report.html"), "utf8");
  }, 60_000);

  it("says at the top that it is downsampled, how, and where the full data is", () => {
    const notice = page.indexOf(`<div class="downsampled"`);
    expect(notice).toBeGreaterThan(0);
    expect(notice).toBeLessThan(page.indexOf(`id="anomalies"`));
    const text = page.slice(notice, page.indexOf("</div>", notice));
    expect(text).toMatch(/history has 6\d{4} events/);
    expect(text).toMatch(/overview in [\d.]+ m?s buckets/);
    expect(text).toContain("history.ndjson");
    expect(text).toContain("resource.ndjson");
  });

  it("links every witness to a window that holds the events it cites", () => {
    const witnesses = Object.values(results.anomalies).flat();
    expect(witnesses.length).toBeGreaterThan(0);
    const links = ids(page, /href="#tl-(w\d+-\d+)"/g);
    const targets = ids(page, /<g class="witness" id="tl-(w\d+-\d+)"/g);
    expect(new Set(links).size).toBe(witnesses.length);
    expect(new Set(targets)).toEqual(new Set(links));
    expect(targets.length).toBe(new Set(targets).size);
    // Each cited event is quoted from the windows, never "not in the history".
    expect(page).not.toContain("not in the history");
    expect(page).not.toContain("not in the resource log");
    // Each window is reachable from the overview.
    const windows = ids(page, /<h3 id="win-(\d+)">/g);
    expect(windows.length).toBeGreaterThan(0);
    for (const k of windows) expect(page).toContain(`href="#win-${k}"`);
  });

  it("keeps the page small and draws far fewer events than the run has", () => {
    expect(page.length).toBeLessThan(5_000_000);
    const drawn = ids(page, /<p class="note">(\d+) events, \d+ operations/g).reduce((n, v) => n + Number(v), 0);
    expect(drawn).toBeGreaterThan(0);
    expect(drawn).toBeLessThan(30_000);
  });

  it("leaves a run out of time order to the in-memory renderer", async () => {
    const other = await newDir();
    generateRun(other, { events: 3_000, seed: 5, keys: 2, clients: 6, workers: 2, fencing: true });
    const lines = (await readFile(join(other, "history.ndjson"), "utf8")).split("\n");
    // A killed run may store lines out of time order (docs/history-format.md); swap
    // two far apart.
    [lines[100], lines[2000]] = [lines[2000], lines[100]];
    await writeFile(join(other, "history.ndjson"), lines.join("\n"));
    const out = await reportRun(other, { ...results, anomalies: {}, anomaly_types: [], stats: {} }, { fullUpTo: 1000 });
    expect(out.downsampled).toBe(false);
  });
});

describe("a small run's report", () => {
  it("is exactly what the in-memory renderer draws", async () => {
    const dir = await newDir();
    generateRun(dir, { events: 4_000, seed: 9, keys: 2, clients: 8, workers: 2, fencing: false });
    const { results } = await checkAndReport(dir);
    const page = await readFile(join(dir, "report.html"), "utf8");
    const history = await readHistory(join(dir, "history.ndjson"));
    const resource = await readResourceLog(join(dir, "resource.ndjson"));
    expect(page).toBe(renderReportHtml({ header: history.header, events: history.events, decisions: resource?.decisions ?? null, results }));
    expect(page).not.toContain(`class="downsampled"`);
  }, 30_000);

  it("is downsampled past a lower threshold, with every event of a window complete", async () => {
    const dir = await newDir();
    generateRun(dir, { events: 4_000, seed: 9, keys: 2, clients: 8, workers: 2, fencing: false });
    const { results } = await checkAndReport(dir);
    const out = await reportRun(dir, results, { fullUpTo: 1_000, windowEvents: 600 });
    expect(out.downsampled).toBe(true);
    const page = await readFile(join(dir, "report.html"), "utf8");
    expect(page).toContain(`class="downsampled"`);
    expect(page).not.toContain("not in the history");
  }, 30_000);

  it("reads each window whole: every event in its span, and the invokes of what completes in it", async () => {
    const dir = await newDir();
    generateRun(dir, { events: 4_000, seed: 9, keys: 2, clients: 8, workers: 2, fencing: false });
    const { results } = await checkAndReport(dir);
    const groups = anomalyGroups(results);
    expect(groups.length).toBeGreaterThan(0);
    const digest = await digestRun(dir);
    const located = await locate(dir, digest!, groups.flatMap((g) => g.witnesses.flatMap((w) => w.events)), groups.flatMap((g) => g.witnesses.flatMap((w) => w.seqs)));
    const faults = faultWindows(digest!.nemesis, digest!.t1);
    const plan = planWindows(digest!, located, groups, faults, 600);
    await readWindows(dir, digest!, plan.windows);
    const all = (await readHistory(join(dir, "history.ndjson"))).events;
    expect(plan.windows.length).toBeGreaterThan(0);
    for (const w of plan.windows) {
      const have = new Set(w.events.map((e) => e.index));
      for (const e of all) if (e.time >= w.from && e.time <= w.to) expect(have.has(e.index)).toBe(true);
      expect(pairOps(w.events).orphans).toEqual([]);
      for (const d of w.decisions) expect(d.seq).toBeGreaterThan(0);
    }
    for (const g of groups) for (const v of g.witnesses) {
      expect(plan.windows.some((w) => v.events.every((i) => w.events.some((e) => e.index === i)))).toBe(true);
    }
  }, 30_000);
});
