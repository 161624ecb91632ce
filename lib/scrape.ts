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
