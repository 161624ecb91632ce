// The live trace check: OTLP over HTTP in (receiver.ts), each accepted span set
// spooled and fsync'ed before it is acknowledged (spool.ts), and checked as its
// windows settle (windows.ts). A live run directory is
// <store>/traces-live-<port>/<stamp>/: spans.json (the spool, OTLP JSON lines
// that `fencecheck traces` re-checks offline), run.json, and at the end
// results.json and a `closed` marker. A run directory left without the marker
// (the receiver was killed) is continued on the next start with that port: its
// spool is re-read and re-checked first, so nothing acknowledged is lost.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { AddressInfo } from "node:net";
import { writeResults } from "../../checker/index.ts";
import { BadInput } from "../../lib/exit.ts";
import { writeJson } from "../../store/run-dir.ts";
import { runStamp } from "../../store/index.ts";
import type { Results } from "../../store/events.ts";
import { requestSpans, type RequestSpans, type Span } from "../otlp-json.ts";
import { checkSpan, type Gaps } from "../to-history.ts";
import { liveMetrics, type LiveFigures } from "./metrics.ts";
import type { HostClocks } from "../files.ts";
import { receiverServer } from "./receiver.ts";
import { Spool } from "./spool.ts";
import { LiveCheck, type Finding } from "./windows.ts";

export type { Finding } from "./windows.ts";

export const SPOOL_FILE = "spans.json";
export const CLOSED_FILE = "closed";

export interface LiveOptions {
  port: number;
  store: string;
  windowS: number;
  maxBodyBytes: number;
  command: string[];
  /** One line for stdout: a finding, a late span, the start and the end. */
  say: (line: string) => void;
  /** --clock-error, read without the hosts (they have not sent yet). */
  clocks?: HostClocks;
}

export interface LiveRun {
  port: number;
  runDir: string;
  /** Stops accepting (503), settles every window, writes results.json and the `closed` marker. */
  close(): Promise<{ results: Results; gaps: Gaps; spans: number }>;
}

export async function startLive(o: LiveOptions): Promise<LiveRun> {
  const test = `traces-live-${o.port}`;
  const { runDir, continued } = liveRunDir(resolve(o.store, test));
  mkdirSync(runDir, { recursive: true });
  const spoolPath = join(runDir, SPOOL_FILE);
  const figures: LiveFigures = { spansReceived: 0, spansAccepted: 0, spansRejected: 0, spansLate: 0, requests: new Map(), findings: new Map(), keysOpen: 0, spansBuffered: 0, bytesSpooled: 0 };
  const check = new LiveCheck({
    windowNs: BigInt(Math.round(o.windowS * 1e9)),
    run: `${test}/${runDir.split("/").pop()}`,
    onFinding: (f) => {
      figures.findings.set(f.type, (figures.findings.get(f.type) ?? 0) + 1);
      o.say(findingLine(f));
    },
    onLate: (span, cut) => o.say(`LATE ${span.name} span ${span.spanId} (trace ${span.traceId}) of key ${JSON.stringify(span.attributes["lock.key"])} starts ${msBefore(cut - span.start)} before the key's last cut: kept in ${SPOOL_FILE}, not checked live`),
    onRefused: (key, message) => o.say(`REFUSED a window of key ${JSON.stringify(key)}: ${message}`),
    clocks: o.clocks,
  });

  const spool = new Spool(spoolPath);
  let spans = 0;
  if (continued) {
    let replayed = 0;
    await spool.replay((line, n) => {
      const where = `${spoolPath}:${n}`;
      let doc: unknown;
      try {
        doc = JSON.parse(line);
      } catch (err) {
        throw new BadInput(`${where}: not JSON (${(err as Error).message}); the spool of a live run holds one OTLP JSON object a line`);
      }
      const read = requestSpans(doc, where, checkSpan);
      replayed += read.spans.length;
      figures.spansLate += check.add(read.spans);
    });
    spans = replayed;
    o.say(`continuing ${runDir}: ${replayed} spans of ${spool.lines} line(s) re-read from ${SPOOL_FILE}${spool.tornCut ? "; its last line was cut short (a crash mid-write, never acknowledged) and was cut off" : ""}`);
  }
  writeJson(join(runDir, "run.json"), runJson(o, test, runDir, spoolPath, spool, spans, null, check));

  let closing = false;
  let inFlight = 0;
  let drained: (() => void) | null = null;
  const server = receiverServer({
    maxBody: o.maxBodyBytes,
    closing: () => closing,
    counted: (status) => figures.requests.set(status, (figures.requests.get(status) ?? 0) + 1),
    metrics: liveMetrics(() => ({ ...figures, keysOpen: check.keysOpen, spansBuffered: check.buffered, bytesSpooled: spool.bytes })),
    async accept(read: RequestSpans) {
      if (closing) return false;
      figures.spansReceived += read.spans.length + read.rejected;
      figures.spansRejected += read.rejected;
      if (read.spans.length === 0) return true;
      inFlight++;
      try {
        const line = spool.nextLine();
        const where = `${spoolPath}:${line}`;
        for (const s of read.spans) s.where = where;
        await spool.append(JSON.stringify(read.accepted));
        figures.spansAccepted += read.spans.length;
        spans += read.spans.length;
        figures.spansLate += check.add(read.spans);
      } finally {
        if (--inFlight === 0 && drained) drained();
      }
      return true;
    },
  });
  await new Promise<void>((ok, fail) => {
    server.once("error", (err: NodeJS.ErrnoException) => fail(err.code === "EADDRINUSE" ? new BadInput(`port ${o.port} on 127.0.0.1 is taken: choose another --listen PORT`) : err));
    server.listen(o.port, "127.0.0.1", () => ok());
  });
  const port = (server.address() as AddressInfo).port;
  o.say(`listening on http://127.0.0.1:${port}/v1/traces (metrics at /metrics), window ${o.windowS} s; run directory ${runDir}`);

  return {
    port,
    runDir,
    async close() {
      closing = true;
      if (inFlight > 0) await new Promise<void>((ok) => (drained = ok));
      check.settle(null);
      const results = check.results();
      await writeResults(runDir, results);
      writeJson(join(runDir, "run.json"), runJson(o, test, runDir, spoolPath, spool, spans, new Date().toISOString(), check));
      spool.close();
      writeFileSync(join(runDir, CLOSED_FILE), new Date().toISOString() + "\n");
      // No request is being kept any more: the senders' kept-alive connections need not wait.
      const closed = new Promise<void>((ok) => server.close(() => ok()));
      server.closeAllConnections();
      await closed;
      return { results, gaps: check.totalGaps(), spans };
    },
  };
}

/** The newest live run directory of this store and port if it was never closed, else a new one. */
function liveRunDir(base: string): { runDir: string; continued: boolean } {
  const stamps = existsSync(base) ? readdirSync(base).filter((d) => existsSync(join(base, d, SPOOL_FILE))).sort() : [];
  const newest = stamps.at(-1);
  if (newest !== undefined && !existsSync(join(base, newest, CLOSED_FILE))) return { runDir: join(base, newest), continued: true };
  return { runDir: join(base, runStamp()), continued: false };
}

function runJson(o: LiveOptions, test: string, runDir: string, spoolPath: string, spool: Spool, spans: number, closed: string | null, check: LiveCheck): Record<string, unknown> {
  return {
    test,
    run_dir: runDir,
    command: o.command,
    options: { backend: "traces", workload: "fenced-write", model: "lease" },
    traces: { live: { port: o.port, window_s: o.windowS, spool: spoolPath, spool_lines: spool.lines, torn_lines_cut: spool.tornCut, closed }, spans, gaps: check.totalGaps() },
  };
}

function findingLine(f: Finding): string {
  const spans = f.spans.map((s) => `${s.trace_id}/${s.span_id}`).join(" ");
  return `FINDING ${f.type} key ${JSON.stringify(f.key)}: ${f.explanation}${spans ? ` [spans ${spans}]` : ""}`;
}

const msBefore = (ns: bigint) => `${(Number(ns) / 1e6).toFixed(3)} ms`;

