// A real OpenTelemetry Collector (otelcol/, built by `fencecheck setup --extras
// otelcol`, which the library tier's pretest runs) between the real SDK and the
// trace check: spans that fencecheck/otel's wrappers make reach the collector's
// file through its OTLP receiver (and through a second collector by its OTLP/HTTP
// exporter, gzipped) and `readOtlpJson` reads them; and `fencecheck test --otel`
// on Redis reaches the run's own verdict from the spans of the run, valid and
// with stale writes. What --otel does not trace is refused before anything starts.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { existsSync, readFileSync, readdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { ProcessGroup } from "../../cluster/processes.ts";
import { freePort } from "../../cluster/ports.ts";
import { collectorConfig, otelcolBuilt, startCollector, OTELCOL_SETUP, type RunningCollector } from "../../otelcol/index.ts";
import { tracedLock, tracedWrite } from "../../otel/index.ts";
import { readOtlpJson, traceHistory } from "../../traces/index.ts";
import type { Hold, LockClient, Outcome } from "../../clients/lock.ts";
import { eventually, jepsenRun, refusesEach, tempDir, type StoredRun } from "../helpers.ts";

/** A correct lock in memory, with fences: the wrapper and the pipe are what is tested. */
function memoryLock(): LockClient {
  const held = new Map<string, string>();
  let fence = 0;
  return {
    async acquire(key, ttlMs): Promise<Outcome<Hold>> {
      if (held.has(key)) return { type: "fail", error: "busy" };
      const owner = `o${++fence}`;
      held.set(key, owner);
      return { type: "ok", value: { owner, fence, ttlMs } };
    },
    async renew(_key, _hold, ttlMs) {
      return { type: "ok", value: { ttlMs } };
    },
    async release(key, hold) {
      const mine = held.get(key) === hold.owner;
      if (mine) held.delete(key);
      return { type: "ok", value: { released: mine } };
    },
    async close() {},
  };
}

describe("the collector between the SDK and the trace check", () => {
  const dir = tempDir("fc-otelcol-");
  const group = new ProcessGroup(dir);
  let last: RunningCollector;
  let first: RunningCollector;
  const fileOut = join(dir, "out", "spans.json");

  beforeAll(async () => {
    expect(otelcolBuilt(), `the collector is not built: run ${OTELCOL_SETUP}`).toBe(true);
    // The SDK sends to `first`, which forwards gzipped OTLP/HTTP to `last`, which writes the file.
    last = await startCollector({ receiverPort: await freePort(), fileOut, dir, group, name: "otelcol-last" });
    first = await startCollector({ receiverPort: await freePort(), forwardTo: last.url, compression: "gzip", dir, group, name: "otelcol-first" });
  });
  afterAll(async () => {
    await group.stopAll();
  });

  it("its config keeps off the collector's own port 8888 and flushes the file every 100 ms", () => {
    const c = collectorConfig({ receiverPort: 40001, fileOut: "/x/spans.json" }) as { service: { telemetry: unknown }; exporters: { file: Record<string, unknown> } };
    expect(c.service.telemetry).toEqual({ metrics: { level: "none" } });
    expect(c.exporters.file).toMatchObject({ format: "json", flush_interval: "100ms" });
    expect(() => collectorConfig({ receiverPort: 40001 })).toThrow(/nowhere to send spans/);
  });

  it("tracedLock's and tracedWrite's spans reach the file, before and after the collector stops, and read as a valid history", async () => {
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": "collector-test", "service.instance.id": "api-1", "host.name": "here" }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${first.url}/v1/traces` }), { scheduledDelayMillis: 100 })],
    });
    const tracer = provider.getTracer("collector-test");
    const lock = tracedLock(memoryLock(), { thread: 7, tracer });
    for (let i = 0; i < 3; i++) {
      const got = await lock.acquire("orders/42", 1000, 100);
      if (got.type !== "ok") throw new Error("the memory lock refused");
      await tracedWrite("orders/42", got.value, `w${i}`, async () => ({ type: "ok", value: null }), { thread: 7, tracer });
      await lock.release("orders/42", got.value);
    }
    await provider.forceFlush();
    // Through two batch processors and the file's flush, with both collectors running.
    const spans = await eventually(async () => {
      const read = existsSync(fileOut) ? readOtlpJson(readFileSync(fileOut), fileOut) : [];
      if (read.length < 9) throw new Error(`${read.length} spans in the file so far`);
      return read;
    }, 10_000);
    expect(spans.map((s) => s.name).sort()).toEqual([...Array(3).fill("lock.acquire"), ...Array(3).fill("lock.release"), ...Array(3).fill("lock.write")]);
    expect(new Set(spans.map((s) => s.resource["service.instance.id"]))).toEqual(new Set(["api-1"]));
    expect(spans.every((s) => s.attributes["thread.id"] === "7")).toBe(true);
    // One trace per hold: its acquire, write and release.
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(3);
    const history = traceHistory(spans, "collector-test");
    expect(history.gaps.holds_without_release).toBe(0);
    expect(history.events.filter((e) => e.type === "ok")).toHaveLength(9);

    // What a stop flushes: spans sent just before it are in the file after it.
    const late = tracer.startSpan("lock.acquire", { attributes: { "lock.key": "orders/43", "thread.id": "8", "lock.outcome": "fail", "lock.error": "busy" } });
    late.end();
    await provider.shutdown();
    await first.stop();
    await last.stop();
    expect(readOtlpJson(readFileSync(fileOut), fileOut).filter((s) => s.attributes["lock.key"] === "orders/43")).toHaveLength(1);
    expect(group.running("otelcol-last")).toBe(false);
  });
});

/** The trace check's run of a `--otel` run: the one run stored under traces-<test>/ in its store. */
function traceRun(r: StoredRun): { valid: boolean | "unknown"; anomaly_types: string[]; run: Record<string, unknown> } {
  const tests = readdirSync(r.store).filter((d) => d.startsWith("traces-"));
  expect(tests, r.output).toHaveLength(1);
  const runs = readdirSync(join(r.store, tests[0]));
  expect(runs).toHaveLength(1);
  const at = join(r.store, tests[0], runs[0]);
  return { ...JSON.parse(readFileSync(join(at, "results.json"), "utf8")), run: JSON.parse(readFileSync(join(at, "run.json"), "utf8")) };
}

/** The anomalies both checks can find from what each sees. */
const SHARED = ["stale-write-accepted", "mutex-violation"];
const shared = (types: string[]): string[] => types.filter((t) => SHARED.includes(t)).sort();

describe("fencecheck test --otel", () => {
  const run = ["--otel", "--concurrency", "4", "--workers", "2", "--nemesis", "pause", "--nemesis-interval", "1", "--time-limit", "5", "--seed", "3"];

  it("a valid run, fencing on: the trace check of its spans is valid too, and run.json says where the spans are", async () => {
    // Two keys: each key's decisions are numbered from 1 in the trace, or the check would see decisions missing.
    const r = await jepsenRun([...run, "--keys", "2"], "fc-otel-");
    expect(r.exit, r.output).toBe(0);
    expect(r.results?.valid).toBe(true);
    const t = traceRun(r);
    expect(t.valid, r.output).toBe(true);
    expect(r.output).toMatch(/trace check: VALID, agrees with the run's VALID \(run .*traces-redis-fenced-write-pause-fence-on\//);
    const own = JSON.parse(readFileSync(join(realpathSync(join(r.store, "latest")), "run.json"), "utf8"));
    expect(own.otel).toMatchObject({ spans: "otel/spans.json", version: "0.161.0" });
    expect(own.otel.collector).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(own.otel.collector).not.toMatch(/:4318$/);
    // Every write the run made is a span with the resource's decision, and every process of the trace is a worker's client.
    const writes = r.history.filter((e) => e.f === "write" && e.type !== "invoke").length;
    expect(t.run.traces).toMatchObject({ gaps: { writes_without_decision: 0, decisions_without_write: 0, decisions_missing: 0, holds_without_release: 0 } });
    const processes = Object.values((t.run.traces as { processes: Record<string, { instance: string; thread: string }> }).processes);
    expect(new Set(processes.map((p) => p.instance))).toEqual(new Set(["worker-1", "worker-2"]));
    expect(new Set(processes.map((p) => p.thread))).toEqual(new Set(["0", "1", "2", "3"]));
    const spans = readOtlpJson(readFileSync(join(realpathSync(join(r.store, "latest")), "otel", "spans.json")), "spans.json");
    expect(spans.filter((s) => s.name === "lock.write")).toHaveLength(writes);
    expect(spans.filter((s) => s.name === "lock.decision")).toHaveLength(writes);
  });

  it("an owner-blind release under long pauses, fencing off: the trace check finds the run's stale writes and overlaps", async () => {
    const r = await jepsenRun([...run, "--pause-min", "1500", "--pause-max", "2500", "--client", "./examples/broken-release-adapter.ts", "--fence", "off"], "fc-otel-");
    expect(r.exit, r.output).toBe(1);
    const t = traceRun(r);
    expect(t.valid, r.output).toBe(false);
    expect(shared(r.results!.anomaly_types)).not.toEqual([]);
    expect(shared(t.anomaly_types)).toEqual(shared(r.results!.anomaly_types));
    expect(r.output).toMatch(/trace check: INVALID \(.*stale-write-accepted.*\), agrees with the run's INVALID/);
  });
});

describe("fencecheck test --otel refuses what it does not trace", () => {
  refusesEach("test", [
    [["--otel", "--workload", "counter"], /--otel traces a mutex's .* and --workload counter does more/],
    [["--otel", "--fence-reads"], /--otel traces .* and --fence-reads does more/],
    [["--otel", "--lock", "semaphore:2"], /--otel traces .* and --lock semaphore does more/],
  ]);
});
