// The etcd members' own network. Each member advertises, as its peer URL, a proxy
// of the fault proxy in front of its real peer port, so every connection another
// member opens to it passes that proxy. Closing a proxy is not a partition: etcd
// reopens its peer streams from the other side (docs/backends.md, etcd). What works is the
// block_from toxic: every peer request carries `X-Server-From: <member id>`, and
// the proxy in front of member X refuses (and closes) the connections of the
// members X is cut off from. The toxic is put on every peer proxy at start with an
// empty list, so a partition or a heal is one update per proxy, and a server that
// lacks block_from (a real Toxiproxy) fails the run at start, not mid-run. A run
// that never cuts members apart puts no gate there: its peer proxies only carry
// bytes, which any Toxiproxy does.
import { Toxiproxy, ToxiproxyError, type Proxy, type Toxic } from "toxiproxy-node-client";
import { memberCuts } from "../../cluster/cluster.ts";

export interface PeerProxy {
  /** The member behind it: "etcd-1". */
  member: string;
  proxy: Proxy;
  /** Where the other members connect (the member's advertised peer URL). */
  host: string;
  port: number;
  /** The block_from toxic; absent when the run never cuts members apart. */
  gate?: Toxic<{ from: string[] }>;
}

const GATE = "member-partition";

/** Thrown when the fault proxy has no block_from (a real Toxiproxy answers 400). */
export class NoBlockFrom extends Error {}

/** One proxy per member, `upstream` its real peer port; each gets an open gate. */
export async function createPeerProxies(toxiproxyUrl: string, prefix: string, members: Array<{ name: string; peerPort: number }>, listenHost = "127.0.0.1", gated = true): Promise<PeerProxies> {
  const toxiproxy = new Toxiproxy(toxiproxyUrl);
  const made: PeerProxy[] = [];
  const created: Proxy[] = [];
  try {
    for (const m of members) {
      const proxy = await toxiproxy.createProxy({ name: `${prefix}${m.name}-peers`, listen: `${listenHost}:0`, upstream: `127.0.0.1:${m.peerPort}` });
      created.push(proxy);
      const gate = gated ? await addGate(proxy, toxiproxyUrl) : undefined;
      made.push({ member: m.name, proxy, host: listenHost, port: Number(proxy.listen.slice(proxy.listen.lastIndexOf(":") + 1)), gate });
    }
  } catch (err) {
    await Promise.all(created.map((p) => p.remove().catch(() => {})));
    throw err;
  }
  return new PeerProxies(made);
}

/** The block_from toxic, with an empty list, on one member's peer proxy. */
function addGate(proxy: Proxy, toxiproxyUrl: string): Promise<Toxic<{ from: string[] }>> {
  return proxy
    .addToxic<{ from: string[] }>({ name: GATE, type: "block_from", stream: "upstream", toxicity: 1, attributes: { from: [] } } as never)
    .catch((err: unknown) => {
      if (err instanceof ToxiproxyError && /status code 400/.test(err.message))
        throw new NoBlockFrom(
          `the fault proxy at ${toxiproxyUrl} does not know the block_from toxic, which partitions etcd members from each other ` +
            `(a real Toxiproxy answers 400 to it): etcd runs need fencecheck's own fault proxy; drop --toxiproxy`,
        );
      throw err;
    });
}

export class PeerProxies {
  /** The member ids (hex, as in X-Server-From) by member name; set once the cluster is up. */
  private ids = new Map<string, string>();
  constructor(readonly all: PeerProxy[]) {}

  setIds(ids: Map<string, string>): void {
    this.ids = ids;
  }

  of(member: string): PeerProxy {
    const p = this.all.find((x) => x.member === member);
    if (!p) throw new Error(`no peer proxy for ${member}`);
    return p;
  }

  /** Cut every member off from the members it shares no component with (memberCuts). */
  async partition(components: string[][]): Promise<void> {
    const cuts = memberCuts(this.all.map((p) => p.member), components);
    await Promise.all(this.all.map((p) => this.block(p, cuts.get(p.member)!)));
  }

  async heal(): Promise<void> {
    await Promise.all(this.all.map((p) => this.block(p, [])));
  }

  async remove(): Promise<void> {
    await Promise.all(this.all.map((p) => p.proxy.remove().catch(() => {})));
  }

  private async block(p: PeerProxy, members: string[]): Promise<void> {
    if (!p.gate) throw new Error(`the peer proxy of ${p.member} has no block_from gate: this run was started without member partitions`);
    const from = members.map((m) => {
      const id = this.ids.get(m);
      if (!id) throw new Error(`the member id of ${m} is not known`);
      return id;
    });
    p.gate = await p.gate.update({ ...p.gate.toJson(), attributes: { from } } as never);
  }
}
