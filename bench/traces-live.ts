// What the live trace check takes, and what it keeps (docs/traces.md, "Live:
// --listen"): a synthetic production trace of 1,000 holds per simulated second
// (acquire, write, the resource's decision, release; a few keys; fencing
// correct, so the verdict must be VALID), replayed as fast as the receiver
// takes it, over HTTP, as protobuf ExportTraceServiceRequests of 512 spans from
// a few concurrent senders, to the built `fencecheck traces --listen` in a
// process of its own. After each simulated 10 minutes it prints the spans per
// second since the last line and the receiver's RSS and heap (its /metrics): the
// memory must stay flat, bounded by the window, not grow with the stream.
//
//   npm run bench:traces-live -- [--minutes N] [--senders N] [--keep]
//
// The spool of an hour is several GB: it goes under the system's temporary
// directory and is deleted at the end unless --keep.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import protobuf from "protobufjs";
import { freePort } from "../cluster/ports.ts";
import { repoFile } from "../lib/index.ts";

const HOLDS_PER_S = 1000;
const KEYS = 4;
const INSTANCES = 8;
const THREADS = 64;
const HOLDS_PER_REQUEST = 128; // 4 spans a hold: 512 spans a request
const REPORT_EVERY_S = 600;
const T0 = 1_796_000_000_000_000_000n;

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) {
    process.stderr.write(`--${name} takes a positive number\n`);
    process.exit(254);
  }
  return v;
}

const minutes = option("minutes", 60);
const senders = option("senders", 4);
const keep = process.argv.includes("--keep");
const totalHolds = Math.round(minutes * 60 * HOLDS_PER_S);
const requests = Math.ceil(totalHolds / HOLDS_PER_REQUEST);

// --- The trace: protobuf written field by field (protobufjs's Writer), the OTLP field numbers of traces/otlp-proto.ts.
const LEN = 2, VARINT = 0, I64 = 1;
const tag = (w: protobuf.Writer, field: number, wire: number) => w.uint32((field << 3) | wire);
/** A KeyValue (field 9 of a Span, 1 of a Resource) whose AnyValue is `value`: a string, a bool, or an int64. */
function kv(w: protobuf.Writer, key: string, value: string | number | boolean, field = 9) {
  tag(w, field, LEN).fork();
  tag(w, 1, LEN).string(key);
  tag(w, 2, LEN).fork();
  if (typeof value === "string") tag(w, 1, LEN).string(value);
  else if (typeof value === "boolean") tag(w, 2, VARINT).bool(value);
  else tag(w, 3, VARINT).int64(value);
  w.ldelim().ldelim();
}
function fixed64(w: protobuf.Writer, field: number, ns: bigint) {
  tag(w, field, I64).fixed32(Number(ns & 0xffffffffn)).fixed32(Number(ns >> 32n));
}
const ids = Buffer.alloc(24);
let spanSeq = 0;

/** One span: `attrs` written by `write`, times in µs from the hold's start. */
function span(w: protobuf.Writer, hold: number, name: string, from: bigint, to: bigint, write: (w: protobuf.Writer) => void) {
  tag(w, 2, LEN).fork();
  ids.writeUInt32BE(hold >>> 0, 12);
  ids.writeUInt32BE(++spanSeq >>> 0, 20);
  tag(w, 1, LEN).bytes(ids.subarray(0, 16));
  tag(w, 2, LEN).bytes(ids.subarray(16, 24));
  tag(w, 5, LEN).string(name);
  tag(w, 6, VARINT).int32(1);
  fixed64(w, 7, from);
  fixed64(w, 8, to);
  write(w);
  w.ldelim();
}

/** Request `r`: holds r*128 .. r*128+127, hold i at i ms of simulated time on key i % KEYS, fence and order i / KEYS + 1 (growing per key). */
function requestBody(r: number): Uint8Array {
  const w = protobuf.Writer.create();
  tag(w, 1, LEN).fork(); // ResourceSpans
  tag(w, 1, LEN).fork(); // Resource
  kv(w, "service.instance.id", `api-${r % INSTANCES}`, 1);
  w.ldelim();
  tag(w, 2, LEN).fork(); // ScopeSpans
  for (let i = r * HOLDS_PER_REQUEST; i < Math.min(totalHolds, (r + 1) * HOLDS_PER_REQUEST); i++) {
    const key = `orders/${i % KEYS}`;
    const fence = Math.floor(i / KEYS) + 1;
    const owner = `h${i}`;
    const thread = String(i % THREADS);
    const t = T0 + BigInt(i) * 1_000_000n; // 1 ms a hold
    const at = (us: number) => t + BigInt(us) * 1000n;
    const common = (w: protobuf.Writer) => (kv(w, "lock.key", key), kv(w, "lock.owner", owner), kv(w, "lock.fence", fence), kv(w, "thread.id", thread));
    span(w, i, "lock.acquire", at(0), at(300), (w) => (common(w), kv(w, "lock.ttl_ms", 5000), kv(w, "lock.outcome", "ok")));
    span(w, i, "lock.write", at(400), at(1200), (w) => (common(w), kv(w, "lock.data", `${owner}#1`)));
    span(w, i, "lock.decision", at(600), at(900), (w) => {
      kv(w, "lock.key", key), kv(w, "lock.owner", owner), kv(w, "lock.fence", fence), kv(w, "lock.data", `${owner}#1`);
      kv(w, "lock.decision.accepted", true), kv(w, "lock.decision.order", fence), kv(w, "lock.fencing", true);
    });
    span(w, i, "lock.release", at(1300), at(1500), (w) => (common(w), kv(w, "lock.released", true)));
  }
  w.ldelim().ldelim();
  return w.finish();
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(text.match(new RegExp(`^${name} (\\S+)$`, "m"))?.[1] ?? NaN);
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;

async function main(): Promise<void> {
  const store = mkdtempSync(join(tmpdir(), "fc-bench-traces-live-"));
  const port = await freePort();
  const child = spawn(process.execPath, [repoFile("dist/cli/fencecheck.js"), "traces", "--listen", String(port), "--store", store], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((ok) => child.on("exit", (code) => ok(code)));
  for (let i = 0; i < 200 && !out.includes("listening on"); i++) await new Promise((r) => setTimeout(r, 50));
  if (!out.includes("listening on")) throw new Error(`the receiver did not start: ${out}`);
  const url = `http://127.0.0.1:${port}`;
  process.stdout.write(`${minutes} simulated minute(s): ${totalHolds} holds, ${totalHolds * 4} spans in ${requests} protobuf requests of ${HOLDS_PER_REQUEST * 4} spans, ${senders} senders, to ${url}; spool under ${store}\n`);

  const started = Date.now();
  let next = 0;
  let spansSent = 0;
  let lastReport = { at: started, spans: 0 };
  const perReport = (REPORT_EVERY_S * HOLDS_PER_S) / HOLDS_PER_REQUEST;
  let nextReport = Math.min(requests, Math.ceil(perReport));
  const reports: Promise<void>[] = [];
  const send = async () => {
    for (;;) {
      const r = next++;
      if (r >= requests) return;
      const body = Buffer.from(requestBody(r));
      const res = await fetch(`${url}/v1/traces`, { method: "POST", headers: { "Content-Type": "application/x-protobuf" }, body });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`request ${r}: ${res.status}`);
      spansSent += Math.min(HOLDS_PER_REQUEST, totalHolds - r * HOLDS_PER_REQUEST) * 4;
      if (r + 1 >= nextReport) {
        nextReport += Math.ceil(perReport);
        reports.push(report((((r + 1) * HOLDS_PER_REQUEST) / HOLDS_PER_S / 60).toFixed(1)));
      }
    }
  };
  /** One line: spans per second since the last, and the receiver's memory now. */
  const report = async (simulated: string, note = "") => {
    const now = Date.now();
    const rate = ((spansSent - lastReport.spans) / (now - lastReport.at)) * 1000;
    lastReport = { at: now, spans: spansSent };
    const [rss, heap, buffered, spool] = await Promise.all(["process_resident_memory_bytes", "nodejs_heap_size_used_bytes", "fencecheck_traces_spans_buffered", "fencecheck_traces_spool_bytes"].map((m) => metric(url, m)));
    process.stdout.write(`simulated ${simulated} min${note}: ${Math.round(rate)} spans/s, receiver RSS ${mib(rss)}, heap ${mib(heap)}, ${buffered} spans buffered, spool ${mib(spool)}, ${((now - started) / 1000).toFixed(0)} s elapsed\n`);
  };
  await Promise.all(Array.from({ length: senders }, send));
  await Promise.all(reports);
  if (spansSent > lastReport.spans) await report(minutes.toFixed(1), " (all sent)");
  const wall = (Date.now() - started) / 1000;
  process.stdout.write(`sent ${spansSent} spans in ${wall.toFixed(1)} s: ${Math.round(spansSent / wall)} spans/s overall\n`);
  child.kill("SIGINT");
  const settleFrom = Date.now();
  const code = await exited;
  const verdict = out.split("\n").filter((l) => /^(VALID|INVALID|UNKNOWN) |^ {2}|^FINDING|^LATE/.test(l));
  process.stdout.write(`receiver exit ${code} after ${((Date.now() - settleFrom) / 1000).toFixed(1)} s of settling:\n${verdict.slice(0, 20).join("\n")}\n`);
  const spool = out.match(/^Run directory: (\S+)/m)?.[1];
  if (spool) process.stdout.write(`spool ${mib(statSync(join(spool, "spans.json")).size)}${keep ? ` kept in ${spool}` : ", deleted"}\n`);
  if (!keep) rmSync(store, { recursive: true, force: true });
  process.exitCode = code === 0 ? 0 : 1;
}

main().catch((err) => {
  process.stderr.write(`bench:traces-live: ${(err as Error).stack ?? err}\n`);
  process.exitCode = 255;
});
