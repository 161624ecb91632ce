// The Hazelcast members' own network, through the fault proxy: one link per
// ordered pair of members (from, to), a proxy on a loopback address of its own
// (127.0.0.<10 x from + to>, cluster/peer-links.ts peerAddress) at `to`'s real port, in
// front of it. Each member names the others by host name (hz-1, hz-2, hz-3: its
// public address and its TCP/IP member list) and resolves those names from a hosts
// file of its own (hostsFile): its own name to 127.0.0.1, where it binds, the
// others' to its links to them.
//
// Why per pair, and why host names: a Hazelcast member answers on the connection
// another opened to it, and opens one itself to the address the other advertises.
// Advertised at a single proxy's address, that address would be where the proxy
// binds and every member would share the one link into a member; at its real
// address, every connection would go around the proxies. A host name is kept by
// Hazelcast as given (an address is compared by its host string, not the IP it
// resolves to), so all members agree on who is who while each resolves the others
// to links of its own. Whichever side opens a pair's connection, it crosses a link
// of that pair: a partition disables the links of both directions between the
// members it separates (a disabled proxy closes its connections and refuses new
// ones), which any Toxiproxy can do: no toxic of our fault proxy's own is needed.
import { Toxiproxy } from "toxiproxy-node-client";
import { PeerLinks, linkPairs, peerAddress } from "../../cluster/peer-links.ts";

export interface HzPeer {
  name: string;
  /** Its member port, on 127.0.0.1. */
  port: number;
}

export class HzPeerLinks extends PeerLinks {
  /** A link for every ordered pair of members, named after the run (`prefix`). */
  static async create(toxiproxyUrl: string, prefix: string, members: readonly HzPeer[]): Promise<HzPeerLinks> {
    const toxiproxy = new Toxiproxy(toxiproxyUrl);
    const links = await linkPairs(members, async (from, f, to, t) => [
      await toxiproxy.createProxy({ name: `${prefix}${from.name}-to-${to.name}`, listen: `${peerAddress(f + 1, t + 1)}:${to.port}`, upstream: `127.0.0.1:${to.port}` }),
    ]);
    return new HzPeerLinks(links);
  }
}
