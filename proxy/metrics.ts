// What the proxy's GET /metrics shows: the connections it carries and the toxics
// in force. The gauges are read off the proxies at scrape time, so they are what
// the proxies hold at that moment; only the total of connections is counted as
// they come, in plain numbers until the first scrape makes the registry
// (lib/scrape.ts: prom-client is loaded then, not at every proxy's start).
// Labelled by proxy name (a run has one per worker and server, so a handful) and
// by toxic type, never by anything that grows with time.
import { countedTotal, lazyRegistry, type Scraped } from "../lib/index.ts";
import type { Proxy, ProxyHooks } from "./proxy.ts";
import { TOXIC_TYPES } from "./toxics.ts";

export class ProxyMetrics implements ProxyHooks {
  /** Connections each proxy has carried, by its name. */
  private readonly accepted = new Map<string, number>();
  /** The Prometheus text and its content type. */
  readonly scrape: () => Promise<Scraped>;

  /** `proxies.list()` is asked at every scrape. */
  constructor(proxies: { list(): Proxy[] }) {
    const accepted = this.accepted;
    // Its own registry, not prom-client's global one: nothing else loaded in the
    // process leaks in, and a process may run several API servers (the tests do).
    this.scrape = lazyRegistry((prom, registry) => {
      countedTotal(prom, registry, {
        name: "fencecheck_proxy_connections_total",
        help: "Client connections each proxy has carried (accepted and connected to its upstream).",
        labelNames: ["proxy"],
        read: () => [...accepted].map(([proxy, n]) => [{ proxy }, n]),
      });
      new prom.Gauge({
        name: "fencecheck_proxy_connections",
        help: "Client connections each proxy carries now.",
        labelNames: ["proxy"],
        registers: [registry],
        collect() {
          this.reset();
          for (const p of proxies.list()) this.set({ proxy: p.name }, p.connectionCount);
        },
      });
      new prom.Gauge({
        name: "fencecheck_proxy_toxics",
        help: "Toxics in force on all proxies, by type.",
        labelNames: ["type"],
        registers: [registry],
        collect() {
          for (const type of TOXIC_TYPES) this.set({ type }, 0);
          for (const p of proxies.list()) for (const type of p.toxicTypes()) this.inc({ type });
        },
      });
    });
  }

  connected(proxy: string): void {
    this.accepted.set(proxy, (this.accepted.get(proxy) ?? 0) + 1);
  }
}
