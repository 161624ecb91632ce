// A trace is never complete: head sampling drops whole holds (all the spans of a
// hold share its trace), and a lossy pipeline drops single spans, releases among
// them. Every stored fenced-write fixture, as spans (run-spans.ts), with holds
// sampled out and release spans dropped at random (seeded): the gaps are
// counted, and the trace check finds no anomaly type that the complete trace of
// the same run does not have. What is missing is never filled in as proof.
import { describe, it, expect } from "vitest";
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { checkRun } from "../../checker/run.ts";
import { readOtlpJson, traceHistory, writeTraceRun } from "../../traces/index.ts";
import { tempDir } from "../helpers.ts";
import { asSpans, readLines, type SpanInfo } from "./run-spans.ts";

const FIXTURES = resolve(import.meta.dirname, "../../histories/fixtures");
const fixtures = ["good", "bad"]
  .flatMap((kind) => readdirSync(join(FIXTURES, kind)).map((name) => join(FIXTURES, kind, name)))
  .filter((dir) => readLines(join(dir, "history.ndjson"))[0].workload === "fenced-write" && !/expired-on-arrival/.test(dir));

/** A small seeded generator (mulberry32), so a failure names a case that replays. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Sampling out `holds` of the holds (by their trace) and dropping `releases` of the release spans left. */
function lossy(seed: number, holds: number, releases: number): (s: SpanInfo) => boolean {
  const r = random(seed);
  const sampled = new Map<string, boolean>();
  return (s) => {
    if (s.hold !== null) {
      if (!sampled.has(s.hold)) sampled.set(s.hold, r() >= holds);
      if (!sampled.get(s.hold)) return false;
    }
    return !(s.name === "lock.release" && r() < releases);
  };
}

async function check(dir: string, keep?: (s: SpanInfo) => boolean) {
  const spans = readOtlpJson(Buffer.from(asSpans(dir, keep)), "spans.json");
  const history = traceHistory(spans, "gaps/0");
  const out = tempDir("fc-gaps-");
  writeTraceRun(out, history, { test: "gaps", command: [], files: [], spans: spans.length });
  const { results } = await checkRun(out);
  return { types: new Set(results.anomaly_types), valid: results.valid, gaps: history.gaps, spans: spans.length };
}

describe("a trace with holds sampled out and release spans dropped", () => {
  it("has fixtures, some of them with anomalies", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(15);
  });

  it.each(fixtures.map((dir) => [dir.slice(FIXTURES.length + 1), dir]))("%s: gaps counted, no anomaly the complete trace lacks", async (_name, dir) => {
    const complete = await check(dir);
    let droppedReleases = 0;
    for (const [seed, holds, releases] of [[1, 0.3, 0], [2, 0, 0.4], [3, 0.2, 0.3], [4, 0.5, 0.5]] as const) {
      const partial = await check(dir, lossy(seed, holds, releases));
      if (partial.spans === 0) continue;
      const extra = [...partial.types].filter((t) => !complete.types.has(t));
      expect(extra, `seed ${seed}: anomaly types the complete trace does not have`).toEqual([]);
      if (complete.valid === true) expect(partial.valid, `seed ${seed}`).not.toBe(false);
      expect(partial.spans).toBeLessThanOrEqual(complete.spans);
      droppedReleases += partial.gaps.holds_without_release;
    }
    // Every fixture has holds with releases, so dropping 30-50% of them leaves some counted.
    expect(droppedReleases).toBeGreaterThan(0);
    expect(complete.gaps.holds_without_release).toBeLessThanOrEqual(droppedReleases);
  });
});
