// The timeline's lanes matched to workers through run.json's `processes`
// (reports/lane-workers.ts): each lane labelled with its worker, a fault on a
// worker drawn again on the lanes of the processes it hit, and a run without the
// map saying so on the page.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkRun } from "../../checker/index.ts";
import { renderReportHtml, reportRun } from "../../reports/index.ts";
import type { ProcessMap } from "../../store/process-map.ts";
import { decisions, events, header, results } from "./fixture.ts";
import { History, writeRun } from "../checker/build.ts";

/** The fixture's pause is of worker-0: p0 (paused mid-write) and p2 ran there, p1 in worker-1. */
const MAP: ProcessMap = { "0": { worker: "worker-0", client: 0 }, "1": { worker: "worker-1", client: 1 }, "2": { worker: "worker-0", client: 0 } };

const count = (text: string, needle: string) => text.split(needle).length - 1;
const laneFaults = (page: string): string[] => page.match(/<rect class="lane-fault [^"]*"[^>]*><title>[^<]*<\/title><\/rect>/g) ?? [];

describe("lanes matched to workers", () => {
  const mapped = renderReportHtml({ header, events, decisions, results, processes: MAP });
  const bare = renderReportHtml({ header, events, decisions, results });

  it("labels each lane with the worker that ran its process, and names both in its tooltip", () => {
    expect(mapped).toContain(`>p0<tspan class="lane-worker"> · worker-0</tspan><title>lane 0: p0 (worker-0, client 0)</title>`);
    expect(mapped).toContain(`>p1<tspan class="lane-worker"> · worker-1</tspan>`);
    expect(mapped).toContain(`>p2<tspan class="lane-worker"> · worker-0</tspan>`);
    expect(mapped).not.toContain("map-note");
  });

  it("draws the pause of worker-0 on p0's lane, for as long as p0 lived in it, and not on p1's (another worker) or p2's (later)", () => {
    const strips = laneFaults(mapped);
    expect(strips).toHaveLength(1);
    expect(strips[0]).toContain("fault-pause");
    expect(strips[0]).toMatch(/hit p0, which ran in worker-0/);
    // And the legend says what the strip is.
    expect(mapped).toContain("fault on the lane's worker or its links: it hit that process");
  });

  it("names the worker beside each process in a witness's events and decisions", () => {
    expect(mapped).toContain("<td>p0 · worker-0</td>");
    expect(mapped).toContain("<td>p1 · worker-1</td>");
  });

  it("without the map: lanes as before, the fault across every lane only, and a note that says why", () => {
    expect(bare).toContain(`>p0<title>lane 0: p0</title>`);
    expect(bare).not.toContain(`class="lane-worker"`);
    expect(laneFaults(bare)).toEqual([]);
    expect(count(bare, `class="note map-note"`)).toBe(1);
    expect(bare).toMatch(/This run predates run\.json&#39;s processes map .*lanes are not matched to workers/);
  });

  it("reportRun reads the map from the run directory's run.json", async () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1, 5);
    h.nemesis(2, "start-pause", { targets: ["worker-1"] });
    h.acquire(1, "k", [10, 11], "B", 2, 1000);
    h.write(1, "k", [12, 13], "B", 2, "b1");
    h.nemesis(19, "stop-pause", { targets: ["worker-1"] });
    h.write(0, "k", [20, 21], "A", 1, "a1");
    const dir = writeRun(h);
    await writeFile(join(dir, "run.json"), JSON.stringify({ processes: { "0": { worker: "worker-1", client: 0 }, "1": { worker: "worker-2", client: 1 } } }));
    const checked = await checkRun(dir);
    expect(checked.results.anomalies["stale-write-accepted"][0].explanation).toContain("worker-1 (process 0) was paused from 2.000 ms to 19.000 ms");
    await reportRun(dir, checked.results);
    const page = await readFile(join(dir, "report.html"), "utf8");
    expect(page).toContain(`>p0<tspan class="lane-worker"> · worker-1</tspan>`);
    expect(laneFaults(page)).toHaveLength(1);
    // The witness's sentence is in the anomaly list.
    expect(page).toContain("While these holds lasted, worker-1 (process 0) was paused from 2.000 ms to 19.000 ms.");
  });
});
