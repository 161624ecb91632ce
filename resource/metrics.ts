// What GET /metrics shows. Plain counters without labels, so each total is one
// number a person can read off the page. A registry of its own rather than
// prom-client's global one, so nothing else loaded in the process leaks in.
import { collectDefaultMetrics, Counter, Registry } from "prom-client";

export class ResourceMetrics {
  readonly registry = new Registry();
  readonly writesApplied = new Counter({
    name: "resource_writes_applied_total",
    help: "Writes the resource accepted and applied.",
    registers: [this.registry],
  });
  readonly reads = new Counter({
    name: "resource_reads_total",
    help: "Reads the resource answered with data.",
    registers: [this.registry],
  });
  readonly staleRejections = new Counter({
    name: "resource_stale_token_rejections_total",
    help: "Writes (and, with --fence-reads, reads) refused for a stale fencing token.",
    registers: [this.registry],
  });
  readonly badRequests = new Counter({
    name: "resource_bad_requests_total",
    help: "Malformed requests answered 4xx without a decision (a client bug if it moves).",
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
