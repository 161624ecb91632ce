// fencecheck traces --listen: the built command on a loopback port, sent real
// OTLP/HTTP requests (protobuf from the SDK's own ProtobufTraceSerializer, JSON,
// gzip), gets the verdict the file check gets from the same spans; rejects a
// span that breaks the conventions alone (partial_success, read back with the
// SDK's own response decoder); finds a stale write while the stream goes on;
// loses nothing acknowledged when killed with SIGKILL and restarted; and counts
// a span that comes after its key's window was judged as late.
import { describe, it, expect } from "vitest";
import { appendFileSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { parseMetrics, runCli, samplesOf, takenPort, tempDir, waitFor, type CliRun } from "../helpers.ts";
import { instanceLine, kv } from "./otlp.ts";

const T0 = 1_796_000_000_000_000_000n;
let ids = 0;

/** A hold of `owner` on `key` from `at` ms: acquire (lease 1 s), a write at `write` decided by the resource (`order`), and a release unless told not to. */
function hold(key: string, owner: string, fence: number, at: number, write: number, order: number): { client: object[]; resource: object } {
  const span = (name: string, from: number, to: number, attrs: Record<string, unknown>) => ({
    traceId: (++ids).toString(16).padStart(32, "0"),
    spanId: ids.toString(16).padStart(16, "0"),
    name,
    kind: 1,
    startTimeUnixNano: String(T0 + BigInt(from * 1e6)),
    endTimeUnixNano: String(T0 + BigInt(to * 1e6)),
    attributes: kv({ "lock.key": key, "lock.owner": owner, "lock.fence": fence, "thread.id": owner, ...attrs }),
  });
  return {
    client: [
      span("lock.acquire", at, at + 2, { "lock.ttl_ms": 1000, "lock.outcome": "ok" }),
      span("lock.write", write, write + 3, { "lock.data": `${owner}#1` }),
      span("lock.release", write + 4, write + 5, { "lock.released": true }),
    ],
    resource: span("lock.decision", write + 1, write + 2, { "lock.data": `${owner}#1`, "lock.decision.accepted": true, "lock.decision.order": order, "lock.fencing": false }),
  };
}

/** One request's body (and a file exporter's line) of these holds: the clients' spans and the resource's. */
const request = (holds: ReturnType<typeof hold>[]) => instanceLine("api-1", holds.flatMap((h) => [...h.client, h.resource]));

async function listener(store: string, args: string[] = [], port?: number): Promise<{ cli: CliRun; port: number; url: string }> {
  if (port === undefined) {
    const free = await takenPort();
    port = free.port;
    free.close();
  }
  const cli = runCli("traces", ["--listen", String(port), "--store", store, ...args]);
  const up = await waitFor(() => cli.stdout().includes("listening on"), 15_000);
  expect(up, cli.stdout() + cli.stderr()).toBe(true);
  return { cli, port, url: `http://127.0.0.1:${port}` };
}

async function post(url: string, body: Uint8Array | string, type = "application/json", gzip = false) {
  const headers: Record<string, string> = { "Content-Type": type };
  if (gzip) headers["Content-Encoding"] = "gzip";
  const res = await fetch(`${url}/v1/traces`, { method: "POST", headers, body: gzip ? gzipSync(body) : Buffer.from(body) });
  return { status: res.status, type: res.headers.get("content-type"), body: Buffer.from(await res.arrayBuffer()) };
}

/** SIGINT, then the exit code, the verdict the command wrote and its run directory. */
async function stop(cli: CliRun) {
  cli.child.kill("SIGINT");
  const code = await cli.exit;
  const dir = cli.stdout().match(/^Run directory: (\S+)/m)?.[1];
  const results = dir ? JSON.parse(readFileSync(join(dir, "results.json"), "utf8")) : null;
  return { code, dir, results, out: cli.stdout() + cli.stderr() };
}

/** The file check of OTLP JSON lines: exit code and results.json. */
async function fileCheck(lines: string[]) {
  const dir = tempDir("fc-live-file-");
  const file = join(dir, "spans.json");
  appendFileSync(file, lines.join("\n") + "\n");
  const cli = runCli("traces", ["--store", dir, file]);
  const code = await cli.exit;
  const run = cli.stdout().match(/^Run directory: (.*)$/m)?.[1];
  expect(run, cli.stdout() + cli.stderr()).toBeDefined();
  const traces = JSON.parse(readFileSync(join(run!, "run.json"), "utf8")).traces;
  return { code, results: JSON.parse(readFileSync(join(run!, "results.json"), "utf8")), spans: traces.spans, gaps: traces.gaps };
}

/** Real SDK spans: two clients of a lock that grants everyone (mutex-violation) or a correct one, written through the conventions by hand. */
async function sdkSpans(broken: boolean): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ "service.name": "orders", "service.instance.id": "api-1" }), spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer("test");
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  let holder: string | null = null;
  let n = 0;
  await Promise.all(
    [0, 1].map(async (c) => {
      for (let round = 0; round < 4; round++) {
        const owner = `c${c}-${++n}`;
        const attrs = { "lock.key": "k0", "thread.id": String(c) };
        const acquire = tracer.startSpan("lock.acquire", { attributes: { ...attrs, "lock.ttl_ms": 1000 } });
        await sleep(1);
        if (holder !== null && !broken) {
          acquire.setAttributes({ "lock.outcome": "fail", "lock.error": "busy" }).end();
          await sleep(3);
          continue;
        }
        holder = owner;
        acquire.setAttributes({ "lock.outcome": "ok", "lock.owner": owner }).end();
        const write = tracer.startSpan("lock.write", { attributes: { ...attrs, "lock.owner": owner, "lock.data": `${owner}#1` } });
        await sleep(10);
        write.end();
        const release = tracer.startSpan("lock.release", { attributes: { ...attrs, "lock.owner": owner } });
        await sleep(1);
        if (holder === owner) holder = null;
        release.setAttributes({ "lock.released": true }).end();
        await sleep(2);
      }
    }),
  );
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}

describe("fencecheck traces --listen", () => {
  it("protobuf (the SDK's serializer), JSON and gzip are accepted and give the verdict of the file check of the same spans", async () => {
    for (const broken of [true, false]) {
      const spans = await sdkSpans(broken);
      const third = Math.ceil(spans.length / 3);
      const parts = [spans.slice(0, third), spans.slice(third, 2 * third), spans.slice(2 * third)];
      const store = tempDir("fc-live-");
      const { cli, url } = await listener(store);
      const proto = "application/x-protobuf";
      const answers = [
        await post(url, JsonTraceSerializer.serializeRequest(parts[0])!, "application/json"),
        await post(url, ProtobufTraceSerializer.serializeRequest(parts[1])!, proto),
        await post(url, ProtobufTraceSerializer.serializeRequest(parts[2])!, proto, true),
      ];
      expect(answers.map((a) => [a.status, a.type])).toEqual([[200, "application/json"], [200, proto], [200, proto]]);
      expect(ProtobufTraceSerializer.deserializeResponse(answers[1].body).partialSuccess).toBeUndefined();
      const live = await stop(cli);
      const file = await fileCheck([Buffer.from(JsonTraceSerializer.serializeRequest(spans)!).toString()]);
      expect([live.code, live.results.valid, live.results.anomaly_types], live.out).toEqual([file.code, file.results.valid, file.results.anomaly_types]);
      expect(live.code).toBe(broken ? 1 : 0);
      // The spool is OTLP JSON lines the file check reads, with every span, ids and times exact.
      const spooled = await fileCheck(readFileSync(join(live.dir!, "spans.json"), "utf8").trim().split("\n"));
      expect([spooled.code, spooled.spans]).toEqual([file.code, spans.length]);
      expect(live.out).toContain(`${spans.length} spans accepted and spooled, ${spans.length} checked`);
      // 64-bit times exactly, protobuf's fixed64 too: each span's start in the spool is the SDK's to the nanosecond.
      const spool = readFileSync(join(live.dir!, "spans.json"), "utf8");
      for (const span of spans) {
        const [sec, ns] = span.startTime;
        expect(spool).toContain(`"spanId":"${span.spanContext().spanId}"`);
        expect(spool.match(new RegExp(`"spanId":"${span.spanContext().spanId}".*?"startTimeUnixNano":"?(\\d+)`))?.[1]).toBe(String(BigInt(sec) * 1_000_000_000n + BigInt(ns)));
      }
    }
  });

  it("a span that breaks the conventions is rejected alone (partial_success); unreadable bodies 400, other types 415, other paths 404, large bodies 413", async () => {
    const store = tempDir("fc-live-");
    const { cli, url } = await listener(store, ["--max-body", "0.05"]);
    // Two acquires of their own holds, one with no lock.key, a release whose outcome is not one of the three, and a span of another kind.
    const withBadSpans = (n: number) => {
      const exporter = new InMemorySpanExporter();
      const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ "service.instance.id": "api-1" }), spanProcessors: [new SimpleSpanProcessor(exporter)] });
      const tracer = provider.getTracer("test");
      tracer.startSpan("lock.acquire", { attributes: { "lock.key": "k0", "lock.owner": `a${n}`, "lock.outcome": "ok", "thread.id": String(n) } }).end();
      tracer.startSpan("lock.acquire", { attributes: { "lock.owner": "b", "lock.outcome": "ok" } }).end();
      tracer.startSpan("lock.release", { attributes: { "lock.key": "k0", "lock.owner": `a${n}`, "lock.outcome": "maybe" } }).end();
      tracer.startSpan("GET /orders").end();
      return exporter.getFinishedSpans();
    };
    const proto = await post(url, ProtobufTraceSerializer.serializeRequest(withBadSpans(1))!, "application/x-protobuf");
    expect(proto.status).toBe(200);
    const partial = ProtobufTraceSerializer.deserializeResponse(proto.body).partialSuccess!;
    expect(Number(partial.rejectedSpans)).toBe(2);
    expect(partial.errorMessage).toMatch(/2 span\(s\) rejected; the first: .*has no lock\.key/);
    const json = await post(url, JsonTraceSerializer.serializeRequest(withBadSpans(2))!);
    expect(JSON.parse(json.body.toString())).toEqual({ partialSuccess: { rejectedSpans: "2", errorMessage: expect.stringMatching(/has no lock\.key/) } });

    const bad = await post(url, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), "application/x-protobuf");
    expect(bad.status).toBe(400);
    expect((await post(url, "{not json")).status).toBe(400);
    expect((await post(url, '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"AAAA"}]}]}]}', "application/json")).status).toBe(200);
    expect((await fetch(`${url}/v1/traces`, { method: "POST", headers: { "Content-Type": "application/json", "Content-Encoding": "gzip" }, body: "not gzip" })).status).toBe(400);
    expect((await post(url, "x", "text/plain")).status).toBe(415);
    expect((await fetch(`${url}/v1/logs`, { method: "POST", body: "{}" })).status).toBe(404);
    expect((await post(url, "x".repeat(60_000))).status).toBe(413);
    // A small gzip that unpacks past the limit is 413 too.
    expect((await post(url, " ".repeat(200_000), "application/json", true)).status).toBe(413);
    const metrics = parseMetrics(await (await fetch(`${url}/metrics`)).text());
    const value = (name: string, labels = {}) => samplesOf(metrics, name, labels)[0]?.value;
    expect([value("fencecheck_traces_spans_received_total"), value("fencecheck_traces_spans_rejected_total"), value("fencecheck_traces_spans_accepted_total")]).toEqual([9, 5, 4]);
    expect([value("fencecheck_traces_requests_total", { status: "200" }), value("fencecheck_traces_requests_total", { status: "413" })]).toEqual([3, 2]);
    const live = await stop(cli);
    expect(live.code, live.out).toBe(0);
  });

  it("a stale write is reported while the stream goes on, across a window's cut too, as the file check finds it", async () => {
    const store = tempDir("fc-live-");
    const { cli, url } = await listener(store, ["--window", "1"]);
    // a (fence 1) is frozen past its lease: b (fence 2) is granted at 1500 and writes; a's write lands after.
    const lines = [request([hold("k0", "a", 1, 0, 2000, 2), hold("k0", "b", 2, 1500, 1600, 1)])];
    // On k1, c's fence 5 was accepted; a window later, d was granted fence 4 and accepted: only what is carried across the cut shows it.
    lines.push(request([hold("k1", "c", 5, 0, 100, 1)]), request([hold("k1", "d", 4, 5000, 5100, 2)]));
    // On k3 only the resource's spans came: it accepted fence 7, then fence 6.
    lines.push(instanceLine("store-1", [hold("k3", "f", 7, 0, 200, 1).resource, hold("k3", "g", 6, 0, 220, 2).resource]));
    // A hold of another key much later moves the stream's clock on, so the windows above settle.
    lines.push(request([hold("k2", "e", 1, 20_000, 20_100, 1)]));
    for (const line of lines) expect((await post(url, line)).status).toBe(200);
    expect(await waitFor(() => /FINDING stale-write-accepted key "k1"/.test(cli.stdout()), 10_000), cli.stdout()).toBe(true);
    expect(cli.stdout()).toMatch(/FINDING stale-write-accepted key "k0": On key "k0" the resource accepted .* \[spans [0-9a-f]{32}\/[0-9a-f]{16}/);
    expect(cli.stdout()).toMatch(/FINDING fence-regression key "k1"/);
    const metrics = parseMetrics(await (await fetch(`${url}/metrics`)).text());
    expect(cli.stdout()).toMatch(/FINDING stale-write-accepted key "k3": .* by "g" with fence 6 after it had accepted one by "f" with the higher fence 7/);
    expect(samplesOf(metrics, "fencecheck_traces_findings_total", { type: "stale-write-accepted" })[0].value).toBe(3);
    const live = await stop(cli);
    const file = await fileCheck(lines);
    expect([live.code, live.results.anomaly_types], live.out).toEqual([file.code, file.results.anomaly_types]);
    expect(live.results.stats.anomaly_counts["stale-write-accepted"]).toBe(file.results.stats.anomaly_counts["stale-write-accepted"]);
  });

  it("killed with SIGKILL mid-stream and restarted, it loses nothing acknowledged: the verdict and span count of the file check of all spans", async () => {
    const store = tempDir("fc-live-");
    const lines: string[] = [];
    for (let i = 0; i < 24; i++) {
      const key = `k${i % 3}`;
      const t = i * 600;
      // One stale write on k1 at i = 10: o10 froze past its lease, p10 was granted and wrote, then o10's write landed.
      lines.push(i === 10 ? request([hold(key, "o10", 100, t, t + 1250, 23), hold(key, "p10", 105, t + 1100, t + 1150, 22)]) : request([hold(key, `o${i}`, i * 10, t, t + 50, i * 2 + 2)]));
    }
    const first = await listener(store, ["--window", "1"]);
    for (const line of lines.slice(0, 14)) expect((await post(first.url, line)).status).toBe(200);
    first.cli.child.kill("SIGKILL");
    await first.cli.exit;
    // A crash in the middle of writing the next line leaves it cut short.
    const runDir = join(store, `traces-live-${first.port}`, readdirSync(join(store, `traces-live-${first.port}`))[0]);
    appendFileSync(join(runDir, "spans.json"), lines[14].slice(0, 100));
    const second = await listener(store, ["--window", "1"], first.port);
    expect(second.cli.stdout()).toMatch(/continuing .*: \d+ spans of 14 line\(s\) re-read from spans\.json; its last line was cut short/);
    for (const line of lines.slice(14)) expect((await post(second.url, line)).status).toBe(200);
    const live = await stop(second.cli);
    const file = await fileCheck(lines);
    expect(live.dir).toBe(runDir);
    expect([live.code, live.results.valid, live.results.anomaly_types], live.out).toEqual([file.code, file.results.valid, file.results.anomaly_types]);
    expect(live.code).toBe(1);
    expect(live.out).toContain(`${file.spans} spans accepted and spooled`);
    // What the trace lacks is counted alike, window by window: each key's orders skip (by 6), and a window goes on from the last one's.
    expect(JSON.parse(readFileSync(join(runDir, "run.json"), "utf8")).traces.gaps).toEqual(file.gaps);
    expect(file.gaps.decisions_missing).toBeGreaterThan(0);
    expect(readFileSync(join(runDir, "spans.json"), "utf8").trim().split("\n")).toEqual(lines.map((l) => JSON.stringify(JSON.parse(l))));
    // Closed: the next start begins a new run directory.
    const third = await listener(store, [], first.port);
    expect(third.cli.stdout()).not.toContain("continuing");
    await stop(third.cli);
  });

  it("a span that starts before its key's last cut is late: spooled and counted, not checked live", async () => {
    const store = tempDir("fc-live-");
    const { cli, url } = await listener(store, ["--window", "0.5"]);
    const early = hold("k0", "a", 1, 0, 100, 1);
    expect((await post(url, request([early]))).status).toBe(200);
    expect((await post(url, request([hold("k0", "b", 2, 3000, 3100, 2)]))).status).toBe(200);
    // a's hold was judged when the clock passed 3.1 s; a write of a hold from before it comes now.
    const late = hold("k0", "z", 9, 50, 60, 3);
    expect((await post(url, instanceLine("api-2", [late.client[1]]))).status).toBe(200);
    expect(await waitFor(() => cli.stdout().includes("LATE lock.write span"), 5000), cli.stdout()).toBe(true);
    const metrics = parseMetrics(await (await fetch(`${url}/metrics`)).text());
    expect(samplesOf(metrics, "fencecheck_traces_spans_late_total")[0].value).toBe(1);
    const live = await stop(cli);
    expect(live.results.stats.live.spans_late).toBe(1);
    expect(live.out).toMatch(/9 spans accepted and spooled, 8 checked in \d+ window\(s\), 1 late/);
  });
});
