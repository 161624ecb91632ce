// The runner's /metrics (--metrics-port): one address for a Prometheus to scrape
// during a run, with every process's metrics on it. The workers send theirs over
// the IPC channel they already have (runner/worker.ts) and are merged here with
// prom-client's AggregatorRegistry; the fault proxy and the resource serve theirs
// at their own /metrics, read at each scrape. One port rather than one per
// process: nothing more to bind, and a worker frozen by the pause nemesis cannot
// stall a scrape, since it is never asked.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTcpServer, type AddressInfo } from "node:net";
// prom-client is loaded at the first scrape (import("prom-client") below), not at
// every run's start: most runs serve no metrics, and loading it costs about 40 ms.
import { BadInput } from "../lib/index.ts";
import { reservePort } from "../cluster/ports.ts";
import type { MetricsSnapshot } from "../workloads/index.ts";

export interface MetricsSources {
  /** Each worker's metrics as it last sent them; null before its first. */
  workers(): Array<MetricsSnapshot | null>;
  /** Services of the run that serve Prometheus text at <url>/metrics (the fault proxy, the resource). */
  services(): Array<{ name: string; url: string }>;
}

export interface MetricsServer {
  /** http://127.0.0.1:<port>/metrics */
  url: string;
  close(): Promise<void>;
}

// Shorter than Prometheus' default scrape timeout (10 s): a service that does not
// answer costs a comment line, not the whole scrape.
const SERVICE_TIMEOUT_MS = 2000;
const HOST = "127.0.0.1";

/** Serves GET /metrics on 127.0.0.1:`port` (0: a free port) until closed. */
export async function serveMetrics(port: number, sources: MetricsSources): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    answer(req, res, sources).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" });
      res.end(`could not gather the metrics: ${(e as Error).message}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e) => reject(new Error(`--metrics-port ${port}: ${e.message}`)));
    server.listen({ host: HOST, port, exclusive: true }, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${HOST}:${bound}/metrics`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A Prometheus keeps its connection alive between scrapes; it must not hold the run open.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/**
 * Before a run starts anything: is the port free? A port someone else holds is a
 * fact about the user's options, refused (254) with nothing started or stored.
 */
export async function checkMetricsPort(port: number): Promise<void> {
  if (port === 0) return;
  const probe = createTcpServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", (e: NodeJS.ErrnoException) =>
      reject(new BadInput(`--metrics-port ${port}: ${HOST}:${port} cannot be bound (${e.code ?? e.message}); give a free port, or 0 for any`)),
    );
    probe.listen({ host: HOST, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * A soak's metrics ports, one per job (job j's runs serve on port + j): free
 * now, and reserved for the soak's lifetime, so that no run (of this soak or of
 * another fencecheck process) draws one for a server meanwhile.
 */
export async function takeMetricsPorts(port: number, jobs: number): Promise<void> {
  for (let j = 0; j < jobs; j++) {
    await checkMetricsPort(port + j);
    if (!reservePort(port + j))
      throw new BadInput(`--metrics-port ${port}${jobs > 1 ? ` (job ${j}: port ${port + j})` : ""}: another fencecheck process going now holds ${port + j} for a server of its own; give another port`);
  }
}

async function answer(req: IncomingMessage, res: ServerResponse, sources: MetricsSources): Promise<void> {
  const path = new URL(req.url ?? "/", "http://x").pathname;
  if (path !== "/metrics") {
    res.writeHead(404, { "Content-Type": "text/plain" }).end("not found: the metrics are at /metrics\n");
    return;
  }
  if (req.method !== "GET") {
    res.writeHead(405, { "Content-Type": "text/plain", Allow: "GET" }).end("method not allowed\n");
    return;
  }
  const { AggregatorRegistry, Registry } = await import("prom-client");
  const text = await gather(sources, AggregatorRegistry);
  res.writeHead(200, { "Content-Type": Registry.PROMETHEUS_CONTENT_TYPE, "Content-Length": Buffer.byteLength(text) }).end(text);
}

/**
 * The workers' metrics merged into one family per name (a name may appear only
 * once in Prometheus text; every series keeps its worker label, so nothing is
 * summed away), then each service's text as it served it: their names are their
 * own (fencecheck_proxy_*, resource_*), so the families never meet.
 */
async function gather(sources: MetricsSources, AggregatorRegistry: typeof import("prom-client").AggregatorRegistry): Promise<string> {
  const snapshots = sources.workers().filter((s): s is MetricsSnapshot => s !== null);
  const workers = snapshots.length ? await AggregatorRegistry.aggregate(snapshots).metrics() : "";
  const services = await Promise.all(sources.services().map(serviceText));
  return [workers, ...services].join("");
}

async function serviceText(s: { name: string; url: string }): Promise<string> {
  try {
    const res = await fetch(`${s.url}/metrics`, { signal: AbortSignal.timeout(SERVICE_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`it answered ${res.status}`);
    const text = await res.text();
    return text.endsWith("\n") ? text : `${text}\n`;
  } catch (e) {
    // A comment keeps the rest of the scrape valid and says what is missing.
    return `# fencecheck: the ${s.name}'s metrics could not be read: ${String((e as Error).message).replace(/\s+/g, " ")}\n`;
  }
}
