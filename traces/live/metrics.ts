// The receiver's figures in Prometheus's text format, at GET /metrics on the
// receiver's own port: written by hand, since they are a few counters and
// gauges the receiver already keeps.
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

export function metricsText(f: LiveFigures): string {
  const out: string[] = [];
  const metric = (name: string, type: "counter" | "gauge", help: string, samples: Array<[string, number]>) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, v] of samples) out.push(`${name}${labels} ${v}`);
  };
  metric("fencecheck_traces_spans_received_total", "counter", "Spans in requests to /v1/traces.", [["", f.spansReceived]]);
  metric("fencecheck_traces_spans_accepted_total", "counter", "Spans spooled and checked (or late).", [["", f.spansAccepted]]);
  metric("fencecheck_traces_spans_rejected_total", "counter", "Spans that broke the conventions, answered in partial_success.", [["", f.spansRejected]]);
  metric("fencecheck_traces_spans_late_total", "counter", "Spans that started before their key's last cut: spooled, not checked live.", [["", f.spansLate]]);
  metric("fencecheck_traces_requests_total", "counter", "Requests by HTTP status.", [...f.requests].map(([status, n]) => [`{status="${status}"}`, n]));
  metric("fencecheck_traces_findings_total", "counter", "Anomalies found, by type.", [...f.findings].map(([type, n]) => [`{type="${type}"}`, n]));
  metric("fencecheck_traces_keys_open", "gauge", "Lock keys with spans waiting for their window to settle.", [["", f.keysOpen]]);
  metric("fencecheck_traces_spans_buffered", "gauge", "Spans waiting for their window to settle.", [["", f.spansBuffered]]);
  metric("fencecheck_traces_spool_bytes", "gauge", "Bytes in the spool (spans.json).", [["", f.bytesSpooled]]);
  // The receiver's own memory, under the names prom-client's default metrics use: it must stay bounded by the window, not the stream.
  const mem = process.memoryUsage();
  metric("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", [["", mem.rss]]);
  metric("nodejs_heap_size_used_bytes", "gauge", "Process heap size used from Node.js in bytes.", [["", mem.heapUsed]]);
  return out.join("\n") + "\n";
}
