// Every connection from a worker process to a server goes through a proxy of its
// own (one per worker and server), so a nemesis can cut, slow or break any set of
// client-to-server links, as in Jepsen's grudges. The proxies are made through
// Toxiproxy's HTTP API, with its npm client, so the same code drives our own
// fault proxy or a real Toxiproxy (--toxiproxy URL).
import { Toxiproxy, type Proxy } from "toxiproxy-node-client";

export interface Link {
  /** The proxy's name: "<prefix>worker-1--redis-1". */
  proxy: string;
  worker: string;
  server: string;
  /** Where the worker connects. */
  host: string;
  port: number;
  upstream: string;
}

/** Name of a link in nemesis events and reports: worker-1->redis-1. */
export const linkName = (l: Link): string => `${l.worker}->${l.server}`;

export interface Upstream {
  name: string;
  host: string;
  port: number;
}

export class Links {
  private readonly proxies = new Map<string, Proxy>();

  private constructor(readonly toxiproxy: Toxiproxy, readonly all: Link[]) {}

  /** Create a proxy for each (worker, server) pair, all at once. */
  static async create(url: string, prefix: string, workers: string[], servers: Upstream[]): Promise<Links> {
    const toxiproxy = new Toxiproxy(url);
    const bodies = workers.flatMap((w) =>
      servers.map((s) => ({ name: `${prefix}${w}--${s.name}`, listen: "127.0.0.1:0", upstream: `${s.host}:${s.port}`, enabled: true })),
    );
    const made = await toxiproxy.populate(bodies);
    const links: Link[] = [];
    const result = new Links(toxiproxy, links);
    for (const w of workers)
      for (const s of servers) {
        const name = `${prefix}${w}--${s.name}`;
        const p = made[name] ?? (await toxiproxy.get(name));
        result.proxies.set(name, p);
        const [host, port] = splitHostPort(p.listen);
        links.push({ proxy: name, worker: w, server: s.name, host, port, upstream: p.upstream });
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

  /** Delete this run's proxies (a shared Toxiproxy keeps everyone else's). */
  async remove(): Promise<void> {
    await Promise.all([...this.proxies.values()].map((p) => p.remove().catch(() => {})));
  }
}

function splitHostPort(listen: string): [string, number] {
  const i = listen.lastIndexOf(":");
  const host = listen.slice(0, i).replace(/^\[|\]$/g, "") || "127.0.0.1";
  // Toxiproxy may report 0.0.0.0 or [::]; connect on loopback then.
  return [host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host, Number(listen.slice(i + 1))];
}
