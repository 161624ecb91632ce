// Every connection from a worker process to a server goes through a proxy of its
// own (one per worker and server), so a nemesis can cut, slow or break any set of
// client-to-server links, as in Jepsen's grudges. The proxies are made through
// Toxiproxy's HTTP API, with its npm client, so the same code drives our own
// fault proxy or a real Toxiproxy (--toxiproxy URL).
import { Toxiproxy, type Proxy } from "toxiproxy-node-client";
import { linkTarget } from "../store/process-map.ts";

export interface Link {
  /** The proxy's name: "<prefix>worker-1--redis-1". */
  proxy: string;
  worker: string;
  server: string;
  /** Where the worker connects. */
  host: string;
  port: number;
  upstream: string;
  /** A proxy of the user's that every worker's link to this server shares. */
  shared?: true;
}

/** Name of a link in nemesis events and reports: worker-1->redis-1. */
export const linkName = (l: Link): string => linkTarget(l.worker, l.server);

export interface Upstream {
  name: string;
  host: string;
  port: number;
  /** A proxy of the user's already in front of it, to use instead of making one per worker. */
  proxy?: string;
}

export class Links {
  private readonly proxies = new Map<string, Proxy>();

  /** `prefix` starts the name of every proxy and toxic the run makes. */
  private constructor(readonly toxiproxy: Toxiproxy, readonly all: Link[], readonly prefix: string) {}

  /**
   * Create a proxy for each (worker, server) pair, all at once; a server behind a
   * proxy of the user's gets none. Each listens on a port `port()` gives (the
   * run's PortPlan), never on one the kernel picks: a partition disables a
   * proxy, which closes its listener, and a port from the ephemeral range is
   * free for anyone meanwhile. In a fresh clone's `npm test` (four files at a
   * time) another process took one within 3.4 s, and the heal's re-listen
   * failed (500, EADDRINUSE), ending the run. Ports of our own range are
   * handed out only by explicit binds, and reserved among fencecheck's processes.
   */
  static async create(url: string, prefix: string, workers: string[], servers: Upstream[], port: () => Promise<number>): Promise<Links> {
    // Without a prefix the run's toxics could not be told from the user's on their proxy.
    if (prefix === "" && servers.some((s) => s.proxy)) throw new Error("proxies of the user's need a run prefix for the toxics added to them");
    const toxiproxy = new Toxiproxy(url);
    const bodies = [];
    for (const w of workers)
      for (const s of servers.filter((s) => !s.proxy))
        bodies.push({ name: `${prefix}${w}--${s.name}`, listen: `127.0.0.1:${await port()}`, upstream: `${s.host}:${s.port}`, enabled: true });
    const made = bodies.length ? await toxiproxy.populate(bodies) : {};
    const links: Link[] = [];
    const result = new Links(toxiproxy, links, prefix);
    for (const w of workers)
      for (const s of servers) {
        const name = s.proxy ?? `${prefix}${w}--${s.name}`;
        const p = result.proxies.get(name) ?? made[name] ?? (await toxiproxy.get(name));
        result.proxies.set(name, p);
        links.push({ proxy: name, worker: w, server: s.name, ...listenAddress(p.listen), upstream: p.upstream, ...(s.proxy ? { shared: true as const } : {}) });
      }
    return result;
  }

  of(worker: string): Link[] {
    return this.all.filter((l) => l.worker === worker);
  }

  between(workers: readonly string[], servers: readonly string[]): Link[] {
    return this.all.filter((l) => workers.includes(l.worker) && servers.includes(l.server));
  }

  proxy(link: Link): Proxy {
    return this.proxies.get(link.proxy)!;
  }

  /** The run's proxies as run.json records them. */
  describe(): Array<Link & { name: string }> {
    return this.all.map((l) => ({ name: linkName(l), ...l }));
  }

  /** The proxies of the user's among these links: a fault on any of them reaches every worker. */
  shared(links: readonly Link[]): string[] {
    return [...new Set(links.filter((l) => l.shared).map((l) => l.proxy))];
  }

  /**
   * Delete this run's proxies (a shared Toxiproxy keeps everyone else's), and from
   * the user's proxies the toxics named under the run's prefix (a fault the heal
   * did not get to end). Returns what could not be removed, for run.json: the
   * user must hear of a toxic of ours left on their proxy.
   */
  async remove(): Promise<string[]> {
    const left = await Promise.all(
      [...this.proxies.values()].map(async (p): Promise<string[]> => {
        const shared = this.all.some((l) => l.proxy === p.name && l.shared);
        if (!shared) return p.remove().then(() => [], () => []);
        try {
          const ours = (await toxicsOf(p)).filter((t) => t.name.startsWith(this.prefix));
          const failed = await Promise.all(ours.map((t) => p.api.delete(`${p.getPath()}/toxics/${encodeURIComponent(t.name)}`).then(() => [], () => [`${p.name}: toxic ${t.name}`])));
          return failed.flat();
        } catch (err) {
          return [`${p.name}: ${err instanceof Error ? err.message : String(err)}`];
        }
      }),
    );
    return left.flat();
  }
}

/** The toxics on a proxy now (the npm client's Proxy does not keep them). */
export async function toxicsOf(p: Proxy): Promise<Array<{ name: string }>> {
  return (await p.api.get<Array<{ name: string }>>(`${p.getPath()}/toxics`)).data ?? [];
}

/** Where to connect to a proxy that listens on `listen` (host:port as Toxiproxy reports it). */
export function listenAddress(listen: string): { host: string; port: number } {
  const i = listen.lastIndexOf(":");
  const host = listen.slice(0, i).replace(/^\[|\]$/g, "") || "127.0.0.1";
  // Toxiproxy may report 0.0.0.0 or [::]; connect on loopback then.
  return { host: host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host, port: Number(listen.slice(i + 1)) };
}
