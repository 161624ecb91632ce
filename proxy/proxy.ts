// One proxy: a listener, the connections it accepted, and its toxics. Enabling
// listens (on the port it had, once it has had one); disabling closes the listener
// and every connection, as Toxiproxy's stop() does. Toxic changes reach every open
// connection at once.
import net, { type AddressInfo, type Socket } from "node:net";
import { ApiError, toxicExists, toxicNotFound } from "./api-error.ts";
import { Connection } from "./connection.ts";
import { actsOnConnections, parseToxicUpdate, toxicJson, type Toxic, type ToxicJson, type ToxicType } from "./toxics.ts";

export interface ProxyJson {
  name: string;
  listen: string;
  upstream: string;
  enabled: boolean;
  toxics: ToxicJson[];
}

/** What a proxy tells whoever counts (the metrics): a connection it made to its upstream for a client. */
export interface ProxyHooks {
  connected(proxy: string): void;
}

export interface ProxySettings {
  listen?: string;
  upstream?: string;
  enabled?: boolean;
}

const STOP_WAIT_MS = 2000;

// Our rule, not Toxiproxy's: an empty host means loopback, never every interface.
const DEFAULT_HOST = "127.0.0.1";

export function splitHostPort(address: string): { host: string; port: number } | null {
  const m = /^\[([^\]]*)\]:(\d{1,5})$/.exec(address) ?? /^([^:[\]]*):(\d{1,5})$/.exec(address);
  if (!m) return null;
  const port = Number(m[2]);
  if (port > 65535) return null;
  return { host: m[1] || DEFAULT_HOST, port };
}

function joinHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Does `requested` name the listener at `current`? Port 0 ("any port") matches the
 * port it was given, so sending a proxy's original body back does not move it.
 */
export function sameListen(requested: string, current: string): boolean {
  if (requested === current) return true;
  const a = splitHostPort(requested);
  const b = splitHostPort(current);
  return a !== null && b !== null && a.port === 0 && a.host === b.host;
}

export class Proxy {
  enabled = false;
  private toxics: Toxic[] = [];
  private server: net.Server | undefined;
  private readonly connections = new Set<Connection>();
  /** Upstream sockets still connecting, each with the client it is for. */
  private readonly dialing = new Map<Socket, Socket>();

  constructor(
    readonly name: string,
    public listen: string,
    public upstream: string,
    private readonly hooks?: ProxyHooks,
  ) {}

  /** Client connections proxied now (both sides connected). */
  get connectionCount(): number {
    return this.connections.size;
  }

  json(): ProxyJson {
    return { name: this.name, listen: this.listen, upstream: this.upstream, enabled: this.enabled, toxics: this.toxicList() };
  }

  // ---- listening ---------------------------------------------------------------

  async start(): Promise<void> {
    if (this.enabled) return;
    const address = splitHostPort(this.listen);
    if (!address) throw new ApiError(`listen tcp ${this.listen}: bad address (want host:port)`, 500);
    // Go sets TCP_NODELAY on every connection; without it Nagle would blur latency and slicer.
    const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true, noDelay: true });
    server.on("connection", (socket) => this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once("error", (e) => reject(new ApiError(`listen tcp ${this.listen}: ${e.message}`, 500)));
      server.listen({ host: address.host, port: address.port, exclusive: true }, () => resolve());
    });
    // Errors after listening (accept failures) are the OS's; keep serving.
    server.on("error", () => {});
    const bound = server.address() as AddressInfo;
    this.listen = joinHostPort(bound.address, bound.port);
    this.server = server;
    this.enabled = true;
  }

  async stop(): Promise<void> {
    if (!this.enabled) return;
    this.enabled = false;
    const server = this.server;
    this.server = undefined;
    // close() frees the port at once and calls back when every accepted socket is
    // gone; they are all destroyed below. The wait is bounded all the same: an API
    // call must not hang on a socket that is slow to go.
    const closed = new Promise<void>((resolve) => {
      if (!server) return resolve();
      server.close(() => resolve());
      setTimeout(resolve, STOP_WAIT_MS).unref();
    });
    for (const [upstream, client] of this.dialing) {
      upstream.destroy();
      client.destroy();
    }
    this.dialing.clear();
    for (const c of this.connections) c.close();
    await closed;
  }

  async update(settings: ProxySettings): Promise<void> {
    const listen = settings.listen ?? this.listen;
    const upstream = settings.upstream ?? this.upstream;
    const enabled = settings.enabled ?? this.enabled;
    // As Toxiproxy: a new address or upstream restarts the proxy (dropping its connections).
    if (!sameListen(listen, this.listen) || upstream !== this.upstream) {
      await this.stop();
      if (!sameListen(listen, this.listen)) this.listen = listen;
      this.upstream = upstream;
    }
    if (enabled && !this.enabled) await this.start();
    if (!enabled && this.enabled) await this.stop();
  }

  private accept(client: Socket): void {
    client.on("error", () => {});
    const target = splitHostPort(this.upstream);
    if (!this.enabled || !target) {
      // As Toxiproxy: a client whose upstream cannot be reached is simply closed.
      client.destroy();
      return;
    }
    const server = net.connect({ host: target.host, port: target.port, allowHalfOpen: true, noDelay: true });
    server.on("error", () => {});
    this.dialing.set(server, client);
    const giveUp = (): void => {
      this.dialing.delete(server);
      server.destroy();
      client.destroy();
    };
    client.once("close", () => {
      if (this.dialing.has(server)) giveUp();
    });
    server.once("error", () => {
      if (this.dialing.has(server)) giveUp();
    });
    server.once("connect", () => {
      if (!this.dialing.delete(server) || !this.enabled || client.destroyed) return giveUp();
      const connection = new Connection(client, server, {
        toxics: (stream) => this.toxics.filter((t) => t.stream === stream && !actsOnConnections(t)),
        gates: () => this.toxics.filter(actsOnConnections),
        closed: (c) => this.connections.delete(c),
      });
      this.connections.add(connection);
      this.hooks?.connected(this.name);
    });
  }

  // ---- toxics ------------------------------------------------------------------

  toxicTypes(): ToxicType[] {
    return this.toxics.map((t) => t.type);
  }

  /** Upstream toxics first, then downstream, each in the order added (Toxiproxy's order). */
  toxicList(): ToxicJson[] {
    const up = this.toxics.filter((t) => t.stream === "upstream");
    const down = this.toxics.filter((t) => t.stream === "downstream");
    return [...up, ...down].map(toxicJson);
  }

  getToxic(name: string): ToxicJson {
    return toxicJson(this.find(name));
  }

  addToxic(toxic: Toxic): ToxicJson {
    if (this.toxics.some((t) => t.name === toxic.name)) throw toxicExists();
    this.toxics.push(toxic);
    for (const c of this.connections) c.addToxic(toxic);
    return toxicJson(toxic);
  }

  updateToxic(name: string, body: unknown): ToxicJson {
    const existing = this.find(name);
    const updated = parseToxicUpdate(existing, body);
    this.toxics[this.toxics.indexOf(existing)] = updated;
    for (const c of this.connections) c.updateToxic(updated);
    return toxicJson(updated);
  }

  removeToxic(name: string): void {
    const toxic = this.find(name);
    this.toxics = this.toxics.filter((t) => t !== toxic);
    for (const c of this.connections) c.removeToxic(toxic);
  }

  removeAllToxics(): void {
    for (const t of [...this.toxics]) this.removeToxic(t.name);
  }

  private find(name: string): Toxic {
    const toxic = this.toxics.find((t) => t.name === name);
    if (!toxic) throw toxicNotFound();
    return toxic;
  }
}
