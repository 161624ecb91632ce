// checkRun over run directories: stats, unknown verdicts, warnings, results.json.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkRun, writeResults } from "../../checker/index.ts";
import { readRun } from "../../checker/run.ts";
import { BadInput } from "../../lib/index.ts";
import type { RunStats } from "../../store/events.ts";
import { decision, History, tempDir, writeRun } from "./build.ts";

function busyRun() {
  const h = new History();
  h.nemesis(0, "start-pause", { targets: ["c1"] });
  h.acquire(0, "k", [1, 3], "A", 1, 1000);
  h.op(1, "acquire", "k", [2, 4], { ttl_ms: 1000 }, "fail", undefined, "busy");
  h.write(0, "k", [5, 6], "A", 1, "a");
  h.nemesis(6, "stop-pause", { targets: ["c1"] });
  h.nemesis(7, "bump-clock", { targets: ["redis-1"], offset_ms: 100 });
  h.nemesis(7.5, "kill", { targets: ["redis-2"] });
  h.release(0, "k", [8, 9], "A", 1);
  h.acquire(1, "k", [10, 14], "B", 2, 1000);
  h.write(1, "k", [15, 16], "B", 2, "b");
  h.write(0, "k", [17, 18], "A", 1, "late", "fail");
  h.write(1, "k", [19], "B", 2, "b2", "open");
  h.nemesis(20, "restart", { targets: ["redis-2"] });
  return h;
}

describe("checkRun", () => {
  it("fills in the run's figures", async () => {
    const { results, warnings } = await checkRun(writeRun(busyRun()));
    expect(warnings).toEqual([]);
    expect(results.valid).toBe(true);
    const s = results.stats as RunStats;
    expect(s.events).toBe(20);
    expect(s.duration_s).toBe(0.02);
    expect(s.ops).toEqual({ acquire: { ok: 2, fail: 1, info: 0 }, write: { ok: 2, fail: 1, info: 1 }, release: { ok: 1, fail: 0, info: 0 } });
    expect(s.ops_per_s).toBe(350);
    expect(s.acquire_latency_ms).toEqual({ p50: 2, p99: 4, max: 4 });
    expect(s.writes_accepted).toBe(2);
    expect(s.stale_writes_refused).toBe(1);
    expect(s.faults).toEqual({ "start-pause": 1, "bump-clock": 1, kill: 1 });
    expect(s.open_at_end).toBe(1);
  });

  it("counts writes from resource.ndjson when there is one", async () => {
    const log = [
      decision(1, 5.5, "k", 0, "A", 1, null, true, "a"),
      decision(2, 15.5, "k", 1, "B", 2, 1, true, "b"),
      decision(3, 17.5, "k", 0, "A", 1, 2, false, "late"),
      decision(4, 19.5, "k", 1, "B", 2, 2, false, "b2"),
    ];
    const { results } = await checkRun(writeRun(busyRun(), log));
    expect(results.valid).toBe(true);
    expect(results.stats.writes_accepted).toBe(2);
    expect(results.stats.stale_writes_refused).toBe(2);
  });

  it("is unknown when resource.ndjson lacks a write the history says took effect", async () => {
    const log = [decision(1, 5.5, "k", 0, "A", 1, null, true, "a")];
    const { results, warnings } = await checkRun(writeRun(busyRun(), log));
    expect(results.valid).toBe("unknown");
    expect(results.stats.unknown_reasons).toEqual([expect.stringMatching(/1 writes completed ok .* no accepted decision/)]);
    expect(warnings.some((w) => w.includes("cannot fully check"))).toBe(true);
  });

  it("is unknown when resource.ndjson skips a decision number", async () => {
    const log = [
      decision(1, 5.5, "k", 0, "A", 1, null, true, "a"),
      decision(3, 15.5, "k", 1, "B", 2, 1, true, "b"),
    ];
    const { results } = await checkRun(writeRun(busyRun(), log));
    expect(results.valid).toBe("unknown");
  });

  it("an anomaly makes the run invalid even when parts are unknown", async () => {
    const h = busyRun();
    h.acquire(2, "k", [11, 12], "C", 2, 1000);
    const { results } = await checkRun(writeRun(h, [decision(1, 5.5, "k", 0, "A", 1, null, true, "a")]));
    expect(results.valid).toBe(false);
    expect(results.anomaly_types).toContain("duplicate-fence");
  });

  it("warns about a cut-short last line and checks the rest", async () => {
    const dir = writeRun(busyRun().ndjson() + `{"index":20,"time":2100`);
    const { results, warnings } = await checkRun(dir);
    expect(results.valid).toBe(true);
    expect(warnings).toEqual([expect.stringMatching(/history\.ndjson line 22: .*cut short/)]);
  });

  it("is valid for a header with no events", async () => {
    const { results } = await checkRun(writeRun(new History().ndjson()));
    expect(results.valid).toBe(true);
    expect(results.stats.events).toBe(0);
    expect(results.stats.acquire_latency_ms).toBeNull();
  });

  it("throws BadInput for a missing directory or history", async () => {
    await expect(checkRun(join(tempDir(), "nope"))).rejects.toThrow(BadInput);
    await expect(checkRun(tempDir())).rejects.toThrow(/has no history\.ndjson/);
  });

  it("writes results.json", async () => {
    const dir = writeRun(busyRun());
    writeFileSync(join(dir, "run.json"), "{not json");
    const { results, warnings } = await checkRun(dir);
    expect(warnings).toEqual(["run.json: not a JSON object; ignored"]);
    await writeResults(dir, results);
    expect(JSON.parse(readFileSync(join(dir, "results.json"), "utf8"))).toEqual(results);
  });
});

describe("readRun", () => {
  it("hands over the model with its holds grouped once the history is in, before the decisions are read", async () => {
    const dir = join(import.meta.dirname, "../../histories/fixtures/good/recorded-redis-k1-two-clients-fence-on");
    let seen: { holds: number; keys: number; decisions: number | null } | null = null;
    const { b } = await readRun(dir, undefined, (m) => {
      seen = { holds: m.holds.length, keys: m.holdsByKey.size, decisions: m.decisions?.length ?? null };
    });
    const m = b.finish();
    // The second thread of a large run's verdict starts from this model (checkRunKeeping).
    expect(seen).toEqual({ holds: m.holds.length, keys: m.holdsByKey.size, decisions: null });
    expect(m.holds.length).toBeGreaterThan(0);
    expect(m.decisions?.length).toBeGreaterThan(0);
  });
});
