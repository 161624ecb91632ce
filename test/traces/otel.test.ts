// fencecheck/otel's spans, made by the real OpenTelemetry SDK (sdk-trace-base,
// its in-memory exporter) and written as OTLP JSON by the SDK's own serializer,
// are what `fencecheck traces` reads: a lock client that lets two holders in is
// found out from its spans (mutex-violation), a correct one is valid, each hold's
// spans share one trace, and an operation that throws is an unknown outcome. The
// lock clients here are written for the test: the wrapper is the thing tested.
import { describe, it, expect } from "vitest";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { tracedLock, tracedWrite } from "../../otel/index.ts";
import { readOtlpJson, traceHistory, writeTraceRun } from "../../traces/index.ts";
import { checkRun } from "../../checker/run.ts";
import type { Hold, LockClient, Outcome } from "../../clients/lock.ts";
import { tempDir } from "../helpers.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A lock in memory: one holder per key unless `broken`, which grants everyone. */
function memoryLock(broken: boolean, state = new Map<string, string>()): LockClient {
  let n = 0;
  return {
    async acquire(key, ttlMs): Promise<Outcome<Hold>> {
      await sleep(1);
      if (state.has(key) && !broken) return { type: "fail", error: "busy" };
      const owner = `h${++n}-${Math.random().toString(36).slice(2, 8)}`;
      state.set(key, owner);
      return { type: "ok", value: { owner, fence: null, ttlMs } };
    },
    async renew(_key, _hold, ttlMs) {
      return { type: "ok", value: { ttlMs } };
    },
    async release(key, hold) {
      await sleep(1);
      const mine = state.get(key) === hold.owner;
      if (mine) state.delete(key);
      return { type: "ok", value: { released: mine } };
    },
    async close() {},
  };
}

/** Two logical clients of one instance take the lock in turn (or at once, on a broken lock), write, and release; the spans as OTLP JSON. */
async function spansOf(broken: boolean): Promise<{ json: Buffer; exporter: InMemorySpanExporter }> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ "service.name": "orders", "service.instance.id": "api-1" }), spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer("test");
  const state = new Map<string, string>();
  const clients = [0, 1].map((c) => ({ c, lock: tracedLock(memoryLock(broken, state), { tracer, thread: c }) }));
  await Promise.all(
    clients.map(async ({ c, lock }) => {
      for (let round = 0; round < 3; round++) {
        const got = await lock.acquire("k0", 1000, 0);
        if (got.type !== "ok") {
          await sleep(5);
          continue;
        }
        await tracedWrite("k0", got.value, `c${c}#${round}`, async () => (await sleep(20), { type: "ok", value: null }), { tracer, thread: c });
        await lock.release("k0", got.value);
        await sleep(2);
      }
    }),
  );
  await provider.forceFlush();
  const json = Buffer.from(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans())!);
  return { json, exporter };
}

async function verdict(json: Buffer) {
  const spans = readOtlpJson(json, "otel.json");
  const dir = tempDir("fc-otel-");
  writeTraceRun(dir, traceHistory(spans, "otel/0"), { test: "otel", command: [], files: [], spans: spans.length });
  return (await checkRun(dir)).results;
}

describe("fencecheck/otel", () => {
  it("a correct lock's spans are valid; a lock that grants two holders at once is caught from its spans alone", async () => {
    const good = await verdict((await spansOf(false)).json);
    expect([good.valid, good.anomaly_types]).toEqual([true, []]);
    const bad = await verdict((await spansOf(true)).json);
    expect(bad.valid).toBe(false);
    expect(bad.anomaly_types).toContain("mutex-violation");
  });

  it("each hold's spans share its acquire's trace, with the conventions' attributes; a throw is an unknown outcome with the ERROR status", async () => {
    const { exporter } = await spansOf(false);
    const spans = exporter.getFinishedSpans();
    const acquires = spans.filter((s) => s.name === "lock.acquire" && s.attributes["lock.outcome"] === "ok");
    expect(acquires.length).toBeGreaterThan(1);
    for (const a of acquires) {
      const owner = a.attributes["lock.owner"];
      const rest = spans.filter((s) => s !== a && s.attributes["lock.owner"] === owner);
      expect(rest.map((s) => s.name).sort()).toEqual(["lock.release", "lock.write"]);
      expect(rest.every((s) => s.spanContext().traceId === a.spanContext().traceId)).toBe(true);
      expect(a.attributes).toMatchObject({ "lock.key": "k0", "lock.ttl_ms": 1000 });
    }

    const exporter2 = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter2)] });
    const failing: LockClient = { ...memoryLock(false), acquire: async () => Promise.reject(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })) };
    await expect(tracedLock(failing, { tracer: provider.getTracer("t"), thread: 7 }).acquire("k0", 1000, 0)).rejects.toThrow("socket hang up");
    const [span] = exporter2.getFinishedSpans();
    expect([span.name, span.status.code, span.attributes["lock.outcome"], span.attributes["lock.error"], span.attributes["thread.id"]]).toEqual(["lock.acquire", 2, "unknown", "ECONNRESET", "7"]);
  });
});
