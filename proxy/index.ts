// The fault proxy: a server that answers Toxiproxy's HTTP API (docs/fault-proxy.md), so
// the nemesis drives it with `toxiproxy-node-client` exactly as it would drive
// Toxiproxy, plus one toxic of our own, block_from, for partitioning clusters
// whose members reconnect to each other (etcd). Run it in-process, as a child
// process, or from `npm run proxy`.
//
// The server itself (api.ts and what it imports, prom-client among them) is
// loaded by the processes that serve it, not by those that only start one: every
// run's runner imports this file for spawnProxyServer, and would otherwise load
// the whole proxy, and prom-client, at its start.
export { spawnProxyServer, type SpawnedProxyServer } from "./spawn.ts";
export { PROXY_VERSION } from "./version.ts";
export { parseProxyArgs, proxyUsage, type ProxyArgs } from "./args.ts";
export { TOXIPROXY_TOXICS, OWN_TOXIC_TYPES, type ToxicJson, type ToxicType, type Stream } from "./toxics.ts";
export type { ProxyJson } from "./proxy.ts";

export interface ProxyServer {
  /** http://host:port, what `new Toxiproxy(url)` wants. */
  url: string;
  port: number;
  /** Closes the API, every proxy listener and every proxied connection. */
  close(): Promise<void>;
}

/** The API server in this process. Port 0 picks a free port. */
export async function startProxyServer(opts: { host?: string; port: number; toxiproxyOnly?: boolean }): Promise<ProxyServer> {
  return (await import("./api.ts")).startApiServer(opts);
}

/** Serve the API as this process's whole work (cli/proxy.ts; proxy/main.ts for spawnProxyServer). */
export async function serveProxyProcess(opts: { host: string; port: number; watchStdin: boolean; toxiproxyOnly: boolean }): Promise<void> {
  await (await import("./serve.ts")).serveProxyProcess(opts);
}
