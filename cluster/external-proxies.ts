// Proxies of the user's in front of an external cluster's servers (--endpoints
// JSON, "proxy" per server): proxies already in place on their Toxiproxy, which
// the run uses instead of making its own. They are the user's, so a run only ever
// adds toxics to them (and removes those again, cluster/links.ts); it never makes,
// disables or deletes one. Whether each is there is a fact about the user's input,
// asked before anything starts (runner/preflight.ts).
import { Toxiproxy, ToxiproxyError, type Proxy } from "toxiproxy-node-client";
import { BadInput } from "../lib/index.ts";
import type { ExternalServer, PlacedServer } from "./external.ts";
import { listenAddress, toxicsOf } from "./links.ts";

/** The user's proxies, by the name of the server behind each; BadInput for one the Toxiproxy does not have. */
async function userProxies(url: string, servers: readonly ExternalServer[]): Promise<Map<string, Proxy>> {
  const toxiproxy = new Toxiproxy(url);
  const found = new Map<string, Proxy>();
  for (const s of servers) {
    if (!s.proxy) continue;
    try {
      found.set(s.name, await toxiproxy.get(s.proxy));
    } catch (err) {
      if (err instanceof ToxiproxyError && /status code 404/.test(err.message))
        throw new BadInput(`--endpoints: ${s.name}'s proxy ${JSON.stringify(s.proxy)} is not on the Toxiproxy at ${url} (make it there first, or leave "proxy" out and fencecheck makes its own)`);
      throw err;
    }
  }
  return found;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);
const sameHost = (a: string, b: string): boolean => a === b || (LOOPBACK.has(a) && LOOPBACK.has(b));

/**
 * Before the run: every proxy named is there and enabled (a disabled one would
 * refuse every client, and enabling it is the user's business, not ours). Returns
 * warnings: a proxy whose upstream is not the host:port given for its server, or
 * that already has toxics of its own (the run's clients go through them too).
 *
 * An upstream that differs is a warning, not a refusal: it is an address as the
 * Toxiproxy sees it (its container network's names, its own loopback), which need
 * not be how this machine reaches the same server (the compose lab's Toxiproxy
 * dials redis:6379, published here as 127.0.0.1:26379).
 */
export async function checkUserProxies(url: string, servers: readonly ExternalServer[]): Promise<string[]> {
  const proxies = await userProxies(url, servers);
  const warnings: string[] = [];
  for (const s of servers) {
    const p = proxies.get(s.name);
    if (!p) continue;
    if (!p.enabled) throw new BadInput(`--endpoints: ${s.name}'s proxy ${JSON.stringify(p.name)} on ${url} is disabled; enable it (fencecheck never changes a proxy of yours)`);
    const i = p.upstream.lastIndexOf(":");
    const [host, port] = [p.upstream.slice(0, i), Number(p.upstream.slice(i + 1))];
    if (s.host !== undefined && (!sameHost(host, s.host) || port !== s.port))
      warnings.push(`${s.name}'s proxy ${JSON.stringify(p.name)} forwards to ${p.upstream}, and ${s.name} was given as ${s.host}:${s.port}: the same server only if that is how the Toxiproxy reaches it`);
    const toxics = await toxicsOf(p);
    if (toxics.length) warnings.push(`${s.name}'s proxy ${JSON.stringify(p.name)} already has toxics (${toxics.map((t) => t.name).join(", ")}): the run's clients go through them too`);
  }
  return warnings;
}

/** The servers with the address the run reaches each at: the one given, or else its proxy's listen address. */
export async function placeServers(url: string | null, servers: readonly ExternalServer[]): Promise<PlacedServer[]> {
  const proxies = url ? await userProxies(url, servers.filter((s) => s.host === undefined)) : new Map<string, Proxy>();
  return servers.map((s) => {
    if (s.host !== undefined && s.port !== undefined) return { ...s, host: s.host, port: s.port };
    const p = proxies.get(s.name);
    // parseEndpoints lets a server go without an address only behind a proxy, and buildTest a proxy only with a Toxiproxy.
    if (!p) throw new Error(`${s.name} has neither an address nor a proxy`);
    return { ...s, ...listenAddress(p.listen) };
  });
}
