// One client connection and the connection to the upstream made for it: two links
// (client to server is "upstream", server to client "downstream", as Toxiproxy
// names them), and the block_from verdict.
//
// block_from is judged here, not in a link, because it is about the connection as
// a whole. The client's bytes are read as HTTP requests (request-reader.ts); each
// request head is held until complete, and if the member it names (X-Server-From)
// is blocked, the connection is closed before the head goes on. A connection
// known to come from a member is judged again whenever a block_from toxic is
// added, changed or deleted, so open connections of a member cut off are closed.
import type { Socket } from "node:net";
import { Link } from "./link.ts";
import { RequestReader } from "./request-reader.ts";
import { actsOnConnections, type Stream, type Toxic } from "./toxics.ts";

export interface ConnectionHooks {
  /** The byte toxics of one direction, in the order they were added. */
  toxics(stream: Stream): Toxic[];
  /** The block_from toxics. */
  gates(): Array<Toxic & { type: "block_from" }>;
  /** Both sockets are closed. */
  closed(connection: Connection): void;
}

export class Connection {
  private readonly links: Record<Stream, Link>;
  private readonly requests = new RequestReader();
  /** The member the latest request that named one came from. */
  private sender: string | null = null;
  private clientEnded = false;
  // Toxicity is rolled once per connection and toxic; an update rolls again.
  private readonly gateRolls = new Map<string, boolean>();
  private open = 2;
  private gone = false;

  constructor(
    private readonly client: Socket,
    private readonly server: Socket,
    private readonly hooks: ConnectionHooks,
  ) {
    const reset = (): void => this.reset();
    this.links = {
      upstream: new Link("upstream", client, server, hooks.toxics("upstream"), {
        reset,
        intercept: (data) => {
          this.requests.push(data);
          this.readRequests();
        },
        interceptEnd: () => {
          this.clientEnded = true;
          this.requests.end();
          this.readRequests();
        },
      }),
      downstream: new Link("downstream", server, client, hooks.toxics("downstream"), { reset }),
    };
    for (const socket of [client, server]) socket.once("close", () => this.socketClosed());
    this.links.upstream.start();
    this.links.downstream.start();
  }

  addToxic(toxic: Toxic): void {
    if (actsOnConnections(toxic)) this.judge();
    else this.links[toxic.stream].addToxic(toxic);
  }

  updateToxic(toxic: Toxic): void {
    if (actsOnConnections(toxic)) {
      this.gateRolls.delete(toxic.name);
      this.judge();
    } else this.links[toxic.stream].updateToxic(toxic);
  }

  removeToxic(toxic: Toxic): void {
    if (actsOnConnections(toxic)) this.gateRolls.delete(toxic.name);
    else this.links[toxic.stream].removeToxic(toxic.name);
  }

  /** Close both sockets (FIN, or RST if unread data is left, as a plain close does). */
  close(): void {
    this.client.destroy();
    this.server.destroy();
  }

  /** Abort both sockets with RST, as Toxiproxy's reset_peer does with SO_LINGER 0. */
  reset(): void {
    for (const s of [this.client, this.server]) {
      if (!s.destroyed) s.resetAndDestroy();
    }
  }

  private readRequests(): void {
    for (;;) {
      if (this.gone) return;
      const step = this.requests.next();
      if (step.kind === "wait") {
        // A head still incomplete is held only to be judged by a block_from gate.
        // Without one on this proxy it goes on now, and the rest of the connection
        // as it comes: a binary protocol whose first bytes could begin an HTTP
        // method, and which then waits for the answer (Hazelcast members send
        // "HZC" and wait for the other's "HZC"), would otherwise be held forever.
        if (this.requests.held > 0 && this.hooks.gates().length === 0) {
          this.requests.passRaw();
          continue;
        }
        break;
      }
      if (step.kind === "forward") this.links.upstream.admit(step.bytes);
      else {
        if (step.from !== null) this.sender = step.from;
        this.judge();
      }
    }
    if (this.clientEnded && this.requests.held === 0) this.links.upstream.admitEnd();
  }

  /** Close the connection, forwarding nothing more, if its sender is blocked. */
  private judge(): void {
    const sender = this.sender;
    if (this.gone || sender === null) return;
    if (!this.hooks.gates().some((g) => names(g, sender) && this.rolled(g))) return;
    this.gone = true;
    this.links.upstream.dispose();
    this.links.downstream.dispose();
    this.close();
  }

  private rolled(gate: Toxic): boolean {
    let hit = this.gateRolls.get(gate.name);
    if (hit === undefined) {
      hit = Math.random() < gate.toxicity;
      this.gateRolls.set(gate.name, hit);
    }
    return hit;
  }

  private socketClosed(): void {
    if (--this.open > 0) return;
    this.gone = true;
    this.links.upstream.dispose();
    this.links.downstream.dispose();
    this.hooks.closed(this);
  }
}

function names(gate: Toxic & { type: "block_from" }, sender: string): boolean {
  // etcd prints member ids in lower-case hex; people may not.
  const s = sender.toLowerCase();
  return gate.attributes.from.some((id) => id.trim().toLowerCase() === s);
}
