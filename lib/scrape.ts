// Prometheus text from a registry that prom-client makes at the first scrape. The
// services of a run (the resource, the fault proxy) count from their start in
// plain numbers, and only a scrape turns them into metrics: most runs are never
// scraped, and loading prom-client was a third of each service's start, on the
// path of every run's start.
import type * as PromClient from "prom-client";

export interface Scraped {
  contentType: string;
  text: string;
}

/**
 * A counter in `registry` whose totals are read at collect time from the
 * service's plain numbers: `read` gives each label set's total (one with no
 * labels for an unlabelled counter).
 */
export function countedTotal(
  prom: typeof PromClient,
  registry: PromClient.Registry,
  spec: { name: string; help: string; labelNames?: string[]; read: () => Iterable<[Record<string, string>, number]> },
): void {
  new prom.Counter({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labelNames ?? [],
    registers: [registry],
    collect() {
      this.reset();
      for (const [labels, n] of spec.read()) this.inc(labels, n);
    },
  });
}

/** `register` adds the service's metrics to the new registry, each reading its numbers at collect time. */
export function lazyRegistry(register: (prom: typeof PromClient, registry: PromClient.Registry) => void): () => Promise<Scraped> {
  let made: Promise<PromClient.Registry> | null = null;
  return async () => {
    const registry = await (made ??= import("prom-client").then((prom) => {
      const registry = new prom.Registry();
      register(prom, registry);
      return registry;
    }));
    return { contentType: registry.contentType, text: await registry.metrics() };
  };
}
