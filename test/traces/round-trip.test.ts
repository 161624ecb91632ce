// Every stored fixture run of the fenced-write workload (histories/fixtures), its
// operations written as the spans docs/traces.md asks a service for (one span per
// operation, one thread per process, the resource's decisions as lock.decision
// spans), must get from the trace check the verdict and the anomaly types that
// `fencecheck check` gives the run itself. What the conventions cannot carry is
// left out of the comparison on purpose: the counter workload (lost-update reads
// a value the spans do not carry) and Redlock's validity (expired-on-arrival).
import { describe, it, expect } from "vitest";
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { checkRun } from "../../checker/run.ts";
import { readOtlpJson, traceHistory, writeTraceRun } from "../../traces/index.ts";
import { tempDir } from "../helpers.ts";
import { asSpans, readLines } from "./run-spans.ts";

const FIXTURES = resolve(import.meta.dirname, "../../histories/fixtures");
const fixtures = ["good", "bad"].flatMap((kind) => readdirSync(join(FIXTURES, kind)).map((name) => join(FIXTURES, kind, name)));
const comparable = fixtures.filter((dir) => {
  const header = readLines(join(dir, "history.ndjson"))[0];
  return header.workload === "fenced-write" && !/expired-on-arrival/.test(dir);
});

describe("a run's operations as spans", () => {
  it("has the fixtures to compare", () => {
    expect(comparable.length).toBeGreaterThanOrEqual(15);
  });

  it.each(comparable.map((dir) => [dir.slice(FIXTURES.length + 1), dir]))("%s: the trace check's verdict and anomaly types are the run's", async (_name, dir) => {
    const spans = readOtlpJson(Buffer.from(asSpans(dir)), "spans.json");
    const history = traceHistory(spans, "round-trip/0");
    const out = tempDir("fc-round-trip-");
    writeTraceRun(out, history, { test: "round-trip", command: [], files: [], spans: spans.length });
    const [run, trace] = [await checkRun(dir), await checkRun(out)];
    expect({ valid: trace.results.valid, types: [...trace.results.anomaly_types].sort() }).toEqual({ valid: run.results.valid, types: [...run.results.anomaly_types].sort() });
  });
});
