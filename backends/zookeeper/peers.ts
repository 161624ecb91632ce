// The ZooKeeper members' own network, through the fault proxy. Each ordered pair
// of members (from, to) has two proxies of its own, in front of `to`'s quorum port
// and its election port, so cutting two members apart is disabling the proxies of
// both directions (a disabled proxy closes its connections and refuses new ones).
//
// Why a pair of proxies per direction, each on a loopback address of its own
// (127.0.0.<10 x from + to>, at `to`'s real port numbers): in leader election a
// member that receives a connection from a member with a lower id drops it and
// connects back to the address that member advertised, which is the address of
// its own server line. Listed at a proxy's address, that line would be where it
// binds; listed at its real address, every connect-back would go around the
// proxy and no partition could cut election traffic. Every member's server lines
// name the members by host name (zk-1, zk-2, zk-3), and each JVM resolves those
// names from a hosts file of its own (-Djdk.net.hosts.file): its own name to
// 127.0.0.1, where it binds, and the others' to the proxies from it to them.
// That alone is not enough: ZooKeeper advertises its address as the IP it
// resolved, so a connect-back would still go to 127.0.0.1 directly. The election
// proxies therefore carry the zk_sid_only toxic of our fault proxy, which leaves
// the sender's id alone in the first message: the receiver then connects back as
// its own configuration says, through the proxy from it to the sender. A run that
// never cuts members apart puts no such toxic there (a real Toxiproxy has none):
// connect-backs then go around the proxies, which cuts nothing that is not cut.
import { Toxiproxy } from "toxiproxy-node-client";
import { PeerLinks, linkPairs, peerAddress, type PeerLink } from "../../cluster/peer-links.ts";

export interface ZkPeerPorts {
  name: string;
  /** Its quorum (follower-to-leader) port and its election port, on 127.0.0.1. */
  quorumPort: number;
  electionPort: number;
}

export class ZkPeerProxies extends PeerLinks {
  private constructor(
    links: PeerLink[],
    private readonly sidOnly: boolean,
  ) {
    super(links);
  }

  /** Two proxies for every ordered pair of members, named after the run (`prefix`). */
  static async create(toxiproxyUrl: string, prefix: string, members: ZkPeerPorts[], sidOnly = true): Promise<ZkPeerProxies> {
    const toxiproxy = new Toxiproxy(toxiproxyUrl);
    const links = await linkPairs(members, async (from, f, to, t) => {
      const made = [];
      try {
        for (const [kind, port] of [["quorum", to.quorumPort], ["election", to.electionPort]] as const) {
          const proxy = await toxiproxy.createProxy({ name: `${prefix}${from.name}-to-${to.name}-${kind}`, listen: `${peerAddress(f + 1, t + 1)}:${port}`, upstream: `127.0.0.1:${port}` });
          made.push(proxy);
          if (kind === "election" && sidOnly) await proxy.addToxic({ name: "sid-only", type: "zk_sid_only", stream: "upstream", toxicity: 1, attributes: {} } as never);
        }
      } catch (err) {
        await Promise.all(made.map((p) => p.remove().catch(() => {})));
        throw err;
      }
      return made;
    });
    return new ZkPeerProxies(links, sidOnly);
  }

  /** Cut every member off from those it shares no component with, both ways; heal the rest. */
  override async partition(components: string[][]): Promise<void> {
    // Without zk_sid_only, election traffic goes around the proxies: disabling them would cut only half of it.
    if (!this.sidOnly) throw new Error("the ZooKeeper peer proxies have no zk_sid_only toxic: this run was started without member partitions");
    await super.partition(components);
  }
}
