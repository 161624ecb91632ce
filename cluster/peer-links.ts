// Members cut apart by turning off the proxies between them: one proxy of the
// fault proxy per link from one member to another, each disabled (its connections
// closed, new ones refused) while a partition separates its two ends, and enabled
// again at the heal. The backends whose members meet through such links make them
// (ZooKeeper's per-pair quorum and election proxies, Hazelcast's per-pair member
// links) and cut them here.
import type { Proxy } from "toxiproxy-node-client";
import { memberCuts } from "./cluster.ts";

/** Where member `from` reaches member `to` (both 1-based): the loopback address its links to `to` listen on. */
export const peerAddress = (from: number, to: number): string => `127.0.0.${10 * from + to}`;

/**
 * The hosts file of member `self` (1-based) among the members `names` (in order):
 * its own name on 127.0.0.1, where it binds, each other's at its links to that
 * member, so that an address a member advertises reaches it through the link.
 */
export function hostsFile(self: number, names: readonly string[]): string {
  const lines = ["127.0.0.1 localhost", ...names.map((name, i) => `${i + 1 === self ? "127.0.0.1" : peerAddress(self, i + 1)} ${name}`)];
  return lines.join("\n") + "\n";
}

export interface PeerLink {
  from: string;
  to: string;
  proxy: Proxy;
  enabled: boolean;
}

/**
 * The links of every ordered pair of members, as `make` opens them (one proxy or
 * several per pair); if one cannot be made, those made are removed and the error
 * goes on.
 */
export async function linkPairs<M extends { name: string }>(members: readonly M[], make: (from: M, f: number, to: M, t: number) => Promise<Proxy[]>): Promise<PeerLink[]> {
  const links: PeerLink[] = [];
  try {
    for (const [f, from] of members.entries())
      for (const [t, to] of members.entries()) {
        if (f === t) continue;
        for (const proxy of await make(from, f, to, t)) links.push({ from: from.name, to: to.name, proxy, enabled: true });
      }
  } catch (err) {
    await Promise.all(links.map((l) => l.proxy.remove().catch(() => {})));
    throw err;
  }
  return links;
}

export class PeerLinks {
  constructor(protected readonly links: PeerLink[]) {}

  /** Cut every member off from those it shares no component with, both ways; heal the rest. */
  async partition(components: string[][]): Promise<void> {
    const cuts = memberCuts([...new Set(this.links.map((l) => l.from))], components);
    await Promise.all(this.links.map((l) => this.enable(l, !cuts.get(l.from)!.includes(l.to))));
  }

  async heal(): Promise<void> {
    await Promise.all(this.links.map((l) => this.enable(l, true)));
  }

  async remove(): Promise<void> {
    await Promise.all(this.links.map((l) => l.proxy.remove().catch(() => {})));
  }

  private async enable(l: PeerLink, enabled: boolean): Promise<void> {
    if (l.enabled === enabled) return;
    await l.proxy.update({ enabled } as never);
    l.enabled = enabled;
  }
}
