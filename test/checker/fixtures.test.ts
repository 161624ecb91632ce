// Every stored run under histories/fixtures/good must check valid, every one under
// bad/ invalid, with resource.ndjson and, as a run without a resource would be,
// from the history alone (which may prove less, never more).
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { analyze, loadRun } from "../../checker/index.ts";

const ROOT = resolve(import.meta.dirname, "../../histories/fixtures");
const runs = (kind: string): string[] => readdirSync(join(ROOT, kind), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);

describe("fixtures", () => {
  it("has good and bad runs", () => {
    expect(runs("good").length).toBeGreaterThan(0);
    expect(runs("bad").length).toBeGreaterThan(0);
  });

  for (const name of runs("good")) {
    it(`good/${name} is valid`, async () => {
      const run = await loadRun(join(ROOT, "good", name));
      expect(analyze(run).results).toMatchObject({ valid: true, anomaly_types: [] });
      expect(analyze({ ...run, decisions: null }).results).toMatchObject({ valid: true, anomaly_types: [] });
    });
  }

  // Recorded runs of the two anomalies lock libraries' users report (issue 13), each
  // next to a clean run of the same scenario in good/.
  const expected: Record<string, string> = {
    "recorded-redis-l1-blind-renew-lost-lock-unnoticed": "lost-lock-unnoticed",
    "recorded-redlock-k5-expired-on-arrival": "expired-on-arrival",
  };
  // The amended rules' fixtures (issue 43): each was checked wrongly before.
  const amended: Record<string, string> = {
    // The history alone proves it; the log's line for the stale write says accepted: null.
    "synthetic-unknown-decision-hides-stale-write": "stale-write-accepted",
    "synthetic-reentry-by-another-process": "reentrancy-violation",
    "synthetic-reentry-without-outer-hold": "reentrancy-violation",
  };
  for (const [name, type] of Object.entries(amended)) {
    it(`bad/${name} shows ${type} (the amended rules)`, async () => {
      const { results } = analyze(await loadRun(join(ROOT, "bad", name)));
      expect(results.anomaly_types).toEqual([type]);
    });
  }
  for (const [name, type] of Object.entries(expected)) {
    it(`bad/${name} shows ${type}, from the history alone too`, async () => {
      const run = await loadRun(join(ROOT, "bad", name));
      for (const input of [run, { ...run, decisions: null }]) expect(analyze(input).results.anomaly_types).toContain(type);
    });
  }

  for (const name of runs("bad")) {
    it(`bad/${name} is invalid`, async () => {
      const run = await loadRun(join(ROOT, "bad", name));
      const { results } = analyze(run);
      expect(results.valid).toBe(false);
      for (const type of results.anomaly_types) expect(results.anomalies[type].length).toBeGreaterThan(0);
    });
  }
});
