// Every stored fixture run of the fenced-write workload (histories/fixtures), its
// operations written as the spans docs/traces.md asks a service for (one span per
// operation, one thread per process, the resource's decisions as lock.decision
// spans), must get from the trace check the verdict and the anomaly types that
// `fencecheck check` gives the run itself. What the conventions cannot carry is
// left out of the comparison on purpose: the counter workload (lost-update reads
// a value the spans do not carry) and Redlock's validity (expired-on-arrival).
import { describe, it, expect } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { checkRun } from "../../checker/run.ts";
import { readOtlpJson, traceHistory, writeTraceRun } from "../../traces/index.ts";
import { tempDir } from "../helpers.ts";
import { instanceLine, kv } from "./otlp.ts";

const FIXTURES = resolve(import.meta.dirname, "../../histories/fixtures");
const T0 = 1_796_000_000_000_000_000n;

type Line = Record<string, any>;
const readLines = (file: string): Line[] => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);

const text = (v: unknown) => (v === undefined || v === null ? undefined : typeof v === "string" ? v : JSON.stringify(v));

/** A run's operations and decisions as OTLP JSON lines: the client spans of one instance, one thread per process, and the resource's. */
function asSpans(run: string): string {
  const [header, ...events] = readLines(join(run, "history.ndjson"));
  const open = new Map<number, Line>();
  const spans: Line[] = [];
  let id = 0;
  const span = (name: string, start: number, end: number, attrs: Record<string, unknown>) => {
    id++;
    return { traceId: id.toString(16).padStart(32, "0"), spanId: id.toString(16).padStart(16, "0"), name, startTimeUnixNano: String(T0 + BigInt(start)), endTimeUnixNano: String(T0 + BigInt(end)), attributes: kv(attrs) };
  };
  for (const e of events) {
    if (typeof e.process !== "number") continue;
    if (e.type === "invoke") open.set(e.process, e);
    const inv = open.get(e.process);
    // A span never ended is never exported: an invoke the run never completed has none.
    if (e.type === "invoke" || e.type === "notice" || !inv) continue;
    open.delete(e.process);
    const iv = inv.value ?? {};
    const ov = e.value ?? {};
    const ttls = [iv.ttl_ms, ov.ttl_ms].filter((t) => typeof t === "number");
    spans.push(
      span(`lock.${inv.f}`, inv.time, e.time, {
        "lock.key": inv.key,
        "lock.owner": ov.owner ?? iv.owner,
        "lock.fence": inv.f === "acquire" ? ov.fence : iv.fence,
        "lock.ttl_ms": (inv.f === "acquire" || inv.f === "renew") && ttls.length ? Math.min(...ttls) : undefined,
        "lock.outcome": e.type === "info" ? "unknown" : e.type,
        "lock.error": e.error,
        "lock.released": inv.f === "release" && ov.released === false ? false : undefined,
        "lock.data": inv.f === "write" ? text(iv.data) : undefined,
        "lock.kind": inv.f === "acquire" ? header.lock : undefined,
        "lock.fence_on_reentry": inv.f === "acquire" ? header.fence_on_reentry : undefined,
        "lock.mode": iv.mode,
        "lock.depth": iv.depth,
        "thread.id": String(e.process),
      }),
    );
  }
  const perKey = new Map<string, number>();
  const decisions = readLines(join(run, "resource.ndjson")).map((l) => {
    const order = l.order ?? (perKey.get(l.key) ?? 0) + 1;
    perKey.set(l.key, order);
    return span("lock.decision", l.time, l.time, {
      "lock.key": l.key,
      "lock.owner": l.owner,
      "lock.fence": l.fence,
      "lock.data": text(l.data),
      "lock.decision.accepted": l.accepted,
      "lock.decision.order": order,
      "lock.decision.max_before": l.max_before,
      "lock.fencing": l.fencing,
      "lock.operation": l.op,
    });
  });
  return [instanceLine("clients", spans), ...(decisions.length ? [instanceLine("resource", decisions)] : [])].join("\n") + "\n";
}

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
