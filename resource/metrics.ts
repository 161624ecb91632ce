// What GET /metrics shows. Plain counters without labels, so each total is one
// number a person can read off the page. A registry of its own rather than
// prom-client's global one, so nothing else loaded in the process leaks in; made
// at the first scrape (lib/scrape.ts), the totals counted meanwhile in plain
// numbers. Node's default process metrics come along; registered then, their
// event-loop and GC figures count from the first scrape.
import { countedTotal, lazyRegistry, type Scraped } from "../lib/index.ts";

/** A total counted from the start, before any registry exists. */
class Total {
  value = 0;
  inc(): void {
    this.value++;
  }
}

export class ResourceMetrics {
  readonly writesApplied = new Total();
  readonly reads = new Total();
  readonly staleRejections = new Total();
  readonly badRequests = new Total();

  /** The Prometheus text and its content type. */
  readonly scrape: () => Promise<Scraped> = lazyRegistry((prom, registry) => {
    const counter = (name: string, help: string, total: Total): void => countedTotal(prom, registry, { name, help, read: () => [[{}, total.value]] });
    counter("resource_writes_applied_total", "Writes the resource accepted and applied.", this.writesApplied);
    counter("resource_reads_total", "Reads the resource answered with data.", this.reads);
    counter("resource_stale_token_rejections_total", "Writes (and, with --fence-reads, reads) refused for a stale fencing token.", this.staleRejections);
    counter("resource_bad_requests_total", "Malformed requests answered 4xx without a decision (a client bug if it moves).", this.badRequests);
    prom.collectDefaultMetrics({ register: registry });
  });
}
