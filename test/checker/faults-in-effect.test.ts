// The faults in effect on a witness's holds (checker/faults-in-effect.ts): named
// when they hit the witness's processes (through run.json's `processes`), not when
// they hit another worker; faults on servers named with or without the map.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { analyze, checkRun } from "../../checker/index.ts";
import { faultsInEffect, type FaultInEffect } from "../../checker/faults-in-effect.ts";
import { pairRun } from "../../checker/paired.ts";
import type { ProcessMap } from "../../store/process-map.ts";
import type { Results } from "../../store/events.ts";
import { decision, History, writeRun } from "./build.ts";

/** Processes 0 and 2 ran in worker-1, 1 in worker-2 (2 replaced 0 after an info, as process + concurrency). */
const MAP: ProcessMap = { "0": { worker: "worker-1", client: 0 }, "1": { worker: "worker-2", client: 1 }, "2": { worker: "worker-1", client: 0 } };

/**
 * K1 with faults around it: A (process 0, worker-1) acquires with a 5 ms lease at
 * 1 ms, is frozen from 2 to 19 ms, and writes late at 20 ms, after B (process 1,
 * worker-2) took the lock and wrote. Also: a pause of worker-2 long after every
 * hold, latency on worker-2's links during them, and a server's clock moved.
 */
function frozenHolder() {
  const h = new History();
  h.acquire(0, "k", [0, 1], "A", 1, 5);
  h.nemesis(2, "start-pause", { targets: ["worker-1"], duration_ms: 17 });
  h.nemesis(3, "start-latency", { targets: ["worker-2->redis-1", "worker-2->resource"], latency_ms: 40 });
  h.acquire(1, "k", [10, 11], "B", 2, 1000);
  h.write(1, "k", [12, 13], "B", 2, "b1");
  h.nemesis(14, "bump-clock", { mode: "bump", targets: ["redis-1"], offset_ms: 9000 });
  h.nemesis(15, "stop-latency", { targets: ["worker-2->redis-1", "worker-2->resource"] });
  h.nemesis(16, "reset-clock", { targets: ["redis-1"] });
  h.nemesis(19, "stop-pause", { targets: ["worker-1"] });
  h.write(0, "k", [20, 21], "A", 1, "a1");
  h.release(1, "k", [22, 23], "B", 2);
  h.release(0, "k", [24, 25], "A", 1);
  h.nemesis(30, "start-pause", { targets: ["worker-2"] });
  h.nemesis(40, "stop-pause", { targets: ["worker-2"] });
  const events = h.build();
  const log = [decision(1, 12.5, "k", 1, "B", 2, null, true, "b1"), decision(2, 20.5, "k", 0, "A", 1, 2, true, "a1")];
  return { h, events, log };
}

function enriched(processes: ProcessMap | null, withLog = true): { results: Results; warnings: string[] } {
  const { h, events, log } = frozenHolder();
  const input = { header: h.header, events, decisions: withLog ? log : null };
  const { results } = analyze(input);
  const warnings = faultsInEffect(results, pairRun(input), events.filter((e) => e.process === "nemesis"), processes);
  return { results, warnings };
}

const faultsOf = (r: Results): FaultInEffect[] => (r.anomalies["stale-write-accepted"][0].faults as FaultInEffect[] | undefined) ?? [];

describe("faults in effect on a witness's holds", () => {
  it("names the pause of the stale holder's worker, with its process, and not the faults of the other worker that missed it", () => {
    for (const withLog of [true, false]) {
      const { results, warnings } = enriched(MAP, withLog);
      expect(warnings).toEqual([]);
      expect(results.anomaly_types).toEqual(["stale-write-accepted"]);
      const faults = faultsOf(results);
      const pause = faults.find((f) => f.f === "pause")!;
      expect(pause).toMatchObject({ on: "worker", targets: ["worker-1"], workers: ["worker-1"], processes: [0], from_ms: 2, to_ms: 19 });
      expect(pause.from_index).not.toBeNull();
      expect(pause.to_index).toBeGreaterThan(pause.from_index!);
      // worker-2's pause came after every hold: not named.
      expect(faults.filter((f) => f.targets.includes("worker-2"))).toEqual([]);
      const w = results.anomalies["stale-write-accepted"][0];
      expect(w.explanation).toContain("While these holds lasted, worker-1 (process 0) was paused from 2.000 ms to 19.000 ms");
      expect(w.explanation).not.toContain("worker-2 (");
    }
  });

  it("names a fault on another worker's links when that worker's process is in the witness, and a server's fault for everyone", () => {
    const faults = faultsOf(enriched(MAP).results);
    expect(faults.find((f) => f.f === "latency")).toMatchObject({ on: "link", targets: ["worker-2->redis-1", "worker-2->resource"], processes: [1] });
    expect(faults.find((f) => f.f === "clock")).toMatchObject({ on: "server", targets: ["redis-1"], processes: [0, 1], workers: [] });
    const { explanation } = enriched(MAP).results.anomalies["stale-write-accepted"][0];
    expect(explanation).toContain("worker-2's links to redis-1 and resource (process 1) were slowed by 40 ms from 3.000 ms to 15.000 ms");
    expect(explanation).toContain("the clock of the server redis-1 was moved by +9000 ms from 14.000 ms to 16.000 ms");
  });

  it("does not name a fault on the witness's worker that missed its holds", () => {
    const h = new History();
    h.nemesis(0.2, "start-pause", { targets: ["worker-1"] });
    h.nemesis(0.5, "stop-pause", { targets: ["worker-1"] });
    h.acquire(0, "k", [1, 2], "A", 1, 5);
    h.acquire(1, "k", [10, 11], "B", 2, 1000);
    h.write(1, "k", [12, 13], "B", 2, "b1");
    h.write(0, "k", [20, 21], "A", 1, "a1");
    const events = h.build();
    const input = { header: h.header, events, decisions: null };
    const { results } = analyze(input);
    faultsInEffect(results, pairRun(input), events.filter((e) => e.process === "nemesis"), MAP);
    const [w] = results.anomalies["stale-write-accepted"];
    expect(w.faults).toBeUndefined();
    expect(w.explanation).not.toMatch(/paused/);
  });

  it("without the map: names the servers' faults only, says what it could not match, and warns", () => {
    const { results, warnings } = enriched(null);
    expect(results.stats.process_map).toBe(false);
    expect(warnings).toEqual([expect.stringMatching(/run\.json has no "processes" map .*not the 3 on workers or their links/)]);
    const w = results.anomalies["stale-write-accepted"][0];
    expect((w.faults as FaultInEffect[]).map((f) => f.f)).toEqual(["clock"]);
    // The pause of worker-1 and the latency on worker-2's links overlapped the holds.
    expect(w.faults_unmatched).toBe(2);
    expect(w.explanation).toMatch(/2 faults on workers or their links also overlapped them, but run\.json does not say which worker ran their processes/);
  });

  it("leaves the witnesses and the verdict as they were but for the added field and sentence", () => {
    const { h, events, log } = frozenHolder();
    const plain = analyze({ header: h.header, events, decisions: log }).results;
    const { results } = enriched(MAP);
    expect(results.valid).toBe(plain.valid);
    expect(Object.keys(results.anomalies)).toEqual(Object.keys(plain.anomalies));
    const [before] = plain.anomalies["stale-write-accepted"];
    const [after] = results.anomalies["stale-write-accepted"];
    expect(after.explanation.startsWith(before.explanation + " ")).toBe(true);
    expect({ ...after, faults: undefined, explanation: before.explanation }).toEqual({ ...before, faults: undefined });
  });

  it("names a server's fault that came between two holds (a restart that forgot a fence)", () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1);
    h.release(0, "k", [2, 3], "A", 1);
    h.nemesis(5, "kill", { targets: ["redis-1"] });
    h.nemesis(6, "restart", { targets: ["redis-1"] });
    h.acquire(1, "k", [8, 9], "B", 1);
    const events = h.build();
    const input = { header: h.header, events, decisions: null };
    const { results } = analyze(input);
    faultsInEffect(results, pairRun(input), events.filter((e) => e.process === "nemesis"), MAP);
    const [w] = results.anomalies["duplicate-fence"];
    expect(w.faults).toEqual([expect.objectContaining({ f: "kill", on: "server", between: true, processes: [] })]);
    expect(w.explanation).toContain("Between these holds, the server redis-1 was killed at 5.000 ms and restarted at 6.000 ms.");
  });

  it("checkRun reads the map from the run directory's run.json", async () => {
    const { h, log } = frozenHolder();
    const dir = writeRun(h, log);
    const before = await checkRun(dir);
    expect(before.results.stats.process_map).toBe(false);
    expect(before.warnings).toEqual([expect.stringMatching(/no "processes" map/)]);
    writeFileSync(join(dir, "run.json"), JSON.stringify({ test: "t", processes: MAP }));
    const after = await checkRun(dir);
    expect(after.warnings).toEqual([]);
    expect(after.results.stats.process_map).toBe(true);
    expect(faultsOf(after.results).find((f) => f.f === "pause")).toMatchObject({ targets: ["worker-1"], processes: [0] });
  });
});

describe("the sentence", () => {
  it("names one fault that hit a hold twice in one clause, with both windows", () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1, 5);
    h.nemesis(2, "start-pause", { targets: ["worker-1"] });
    h.nemesis(4, "stop-pause", { targets: ["worker-1"] });
    h.nemesis(6, "start-pause", { targets: ["worker-1"] });
    h.acquire(1, "k", [10, 11], "B", 2, 1000);
    h.write(1, "k", [12, 13], "B", 2, "b1");
    h.nemesis(19, "stop-pause", { targets: ["worker-1"] });
    h.write(0, "k", [20, 21], "A", 1, "a1");
    const events = h.build();
    const input = { header: h.header, events, decisions: null };
    const { results } = analyze(input);
    faultsInEffect(results, pairRun(input), events.filter((e) => e.process === "nemesis"), MAP);
    const [w] = results.anomalies["stale-write-accepted"];
    expect(w.faults).toHaveLength(2);
    expect(w.explanation).toContain("While these holds lasted, worker-1 (process 0) was paused from 2.000 ms to 4.000 ms and from 6.000 ms to 19.000 ms.");
  });
});
