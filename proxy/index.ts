// The fault proxy: a server that answers Toxiproxy's HTTP API (docs/fault-proxy.md), so
// the nemesis drives it with `toxiproxy-node-client` exactly as it would drive
// Toxiproxy, plus one toxic of our own, block_from, for partitioning clusters
// whose members reconnect to each other (etcd). Run it in-process, as a child
// process, or from `npm run proxy`.
import { startApiServer } from "./api.ts";

export { spawnProxyServer, type SpawnedProxyServer } from "./spawn.ts";
export { parseProxyArgs, proxyUsage, type ProxyArgs } from "./args.ts";
export { serveProxyProcess } from "./serve.ts";
export { VERSION as PROXY_VERSION } from "./api.ts";
export type { ToxicJson, ToxicType, Stream } from "./toxics.ts";
export type { ProxyJson } from "./proxy.ts";

export interface ProxyServer {
  /** http://host:port, what `new Toxiproxy(url)` wants. */
  url: string;
  port: number;
  /** Closes the API, every proxy listener and every proxied connection. */
  close(): Promise<void>;
}

/** The API server in this process. Port 0 picks a free port. */
export function startProxyServer(opts: { host?: string; port: number; toxiproxyOnly?: boolean }): Promise<ProxyServer> {
  return startApiServer(opts);
}
