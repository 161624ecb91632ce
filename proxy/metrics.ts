// What the proxy's GET /metrics shows: the connections it carries and the toxics
// in force. The gauges are read off the proxies at scrape time, so they are what
// the proxies hold at that moment; only the total of connections is counted as
// they come. Labelled by proxy name (a run has one per worker and server, so a
// handful) and by toxic type, never by anything that grows with time.
import { Counter, Gauge, Registry } from "prom-client";
import type { Proxy, ProxyHooks } from "./proxy.ts";
import { TOXIC_TYPES } from "./toxics.ts";

export class ProxyMetrics implements ProxyHooks {
  // Its own registry, not prom-client's global one: nothing else loaded in the
  // process leaks in, and a process may run several API servers (the tests do).
  readonly registry = new Registry();
  private readonly accepted = new Counter({
    name: "fencecheck_proxy_connections_total",
    help: "Client connections each proxy has carried (accepted and connected to its upstream).",
    labelNames: ["proxy"],
    registers: [this.registry],
  });

  /** `proxies.list()` is asked at every scrape. */
  constructor(proxies: { list(): Proxy[] }) {
    new Gauge({
      name: "fencecheck_proxy_connections",
      help: "Client connections each proxy carries now.",
      labelNames: ["proxy"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const p of proxies.list()) this.set({ proxy: p.name }, p.connectionCount);
      },
    });
    new Gauge({
      name: "fencecheck_proxy_toxics",
      help: "Toxics in force on all proxies, by type.",
      labelNames: ["type"],
      registers: [this.registry],
      collect() {
        for (const type of TOXIC_TYPES) this.set({ type }, 0);
        for (const p of proxies.list()) for (const type of p.toxicTypes()) this.inc({ type });
      },
    });
  }

  connected(proxy: string): void {
    this.accepted.inc({ proxy });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
