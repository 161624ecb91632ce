// The receiver's figures at GET /metrics on the receiver's own port, through the
// registry the run's services use (lib/scrape.ts): made at the first scrape,
// each metric reading the receiver's plain numbers at collect time, with Node's
// default process metrics (process_resident_memory_bytes, nodejs_heap_size_used_bytes:
// the receiver's memory must stay bounded by the window, not the stream).
import { countedTotal, lazyRegistry, type Scraped } from "../../lib/index.ts";

export interface LiveFigures {
  spansReceived: number;
  spansAccepted: number;
  spansRejected: number;
  spansLate: number;
  requests: Map<number, number>;
  findings: Map<string, number>;
  keysOpen: number;
  spansBuffered: number;
  bytesSpooled: number;
}

/** The Prometheus text of the figures `read` gives at each scrape. */
export function liveMetrics(read: () => LiveFigures): () => Promise<Scraped> {
  return lazyRegistry((prom, registry) => {
    const total = (name: string, help: string, n: (f: LiveFigures) => number) => countedTotal(prom, registry, { name, help, read: () => [[{}, n(read())]] });
    const gauge = (name: string, help: string, n: (f: LiveFigures) => number) =>
      new prom.Gauge({ name, help, registers: [registry], collect() { this.set(n(read())); } });
    total("fencecheck_traces_spans_received_total", "Spans in requests to /v1/traces.", (f) => f.spansReceived);
    total("fencecheck_traces_spans_accepted_total", "Spans spooled and checked (or late).", (f) => f.spansAccepted);
    total("fencecheck_traces_spans_rejected_total", "Spans that broke the conventions, answered in partial_success.", (f) => f.spansRejected);
    total("fencecheck_traces_spans_late_total", "Spans that started before their key's last cut: spooled, not checked live.", (f) => f.spansLate);
    countedTotal(prom, registry, { name: "fencecheck_traces_requests_total", help: "Requests by HTTP status.", labelNames: ["status"], read: () => [...read().requests].map(([status, n]) => [{ status: String(status) }, n]) });
    countedTotal(prom, registry, { name: "fencecheck_traces_findings_total", help: "Anomalies found, by type.", labelNames: ["type"], read: () => [...read().findings].map(([type, n]) => [{ type }, n]) });
    gauge("fencecheck_traces_keys_open", "Lock keys with spans waiting for their window to settle.", (f) => f.keysOpen);
    gauge("fencecheck_traces_spans_buffered", "Spans waiting for their window to settle.", (f) => f.spansBuffered);
    gauge("fencecheck_traces_spool_bytes", "Bytes in the spool (spans.json).", (f) => f.bytesSpooled);
    prom.collectDefaultMetrics({ register: registry });
  });
}
