// A ZooKeeper session as the lock clients use it, over npm node-zookeeper-client
// 1.1.3 (pure JavaScript; docs/backends.md says why not the `zookeeper` package):
// every request sent once (the package's `retries: 0`), with --command-timeout as
// its deadline, and errors sorted by what they prove about the request:
//
// - SESSION_EXPIRED: the session is over; the server deleted its ephemeral nodes
//   before it said so, so whatever the request was, no lock node of it is left.
// - CONNECTION_LOSS, or no answer in time: the request may have been applied, its
//   reply lost (ZOOKEEPER-1262: a create that succeeded, its name never seen).
//
// The package has no read timeout: on a link that silently drops data it waits
// for ever on a server that is gone. As the Java client does, a session that hears
// nothing for two thirds of its timeout drops its connection and moves on to the
// next server (a probe every third of the timeout keeps a quiet link talking).
import zookeeper, { type Client, type Exception as ZkException, type Stat } from "node-zookeeper-client";
import type { Endpoint } from "../../clients/lock.ts";
import { sleep } from "../../lib/index.ts";

const { createClient, Exception } = zookeeper;

/** A request that did not answer as asked; `code` is the history's short error. */
export class ZkCallError extends Error {
  constructor(readonly code: "session-expired" | "conn-lost" | "timeout" | "conn-refused" | "error", message: string) {
    super(message);
  }
}

export type SessionState = "connected" | "disconnected" | "expired" | "closed";

export class ZkSession {
  state: SessionState = "disconnected";
  private lastHeard = Date.now();
  private probe: NodeJS.Timeout | undefined;

  private constructor(
    readonly client: Client,
    private readonly commandTimeoutMs: number,
  ) {
    client.on("state", (s) => {
      const name = String(s.name);
      if (name === "SYNC_CONNECTED") this.state = "connected";
      else if (name === "DISCONNECTED" && this.state !== "closed" && this.state !== "expired") this.state = "disconnected";
      else if (name === "EXPIRED") this.end("expired");
      this.lastHeard = Date.now();
    });
  }

  /** A new session, once connected; a ZkCallError "conn-refused" (nothing was sent) if no server took it in time. */
  static async open(endpoints: Endpoint[], sessionTimeoutMs: number, commandTimeoutMs: number): Promise<ZkSession> {
    const client = createClient(endpoints.map((e) => `${e.host}:${e.port}`).join(","), { sessionTimeout: sessionTimeoutMs, retries: 0, spinDelay: 100 });
    const session = new ZkSession(client, commandTimeoutMs);
    const connected = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), commandTimeoutMs);
      client.once("connected", () => {
        clearTimeout(timer);
        resolve(true);
      });
      client.connect();
    });
    if (!connected) {
      session.close();
      throw new ZkCallError("conn-refused", `no ZooKeeper server took a session within ${commandTimeoutMs} ms`);
    }
    session.state = "connected";
    session.watchReads();
    return session;
  }

  /** The session id as ZooKeeper prints it (hex). */
  get id(): string {
    return this.client.getSessionId().toString("hex");
  }

  /** The timeout the server granted (it clamps the one asked for to its min and max). */
  get timeoutMs(): number {
    return this.client.getSessionTimeout();
  }

  get alive(): boolean {
    return this.state === "connected" || this.state === "disconnected";
  }

  /** One request, answered or failed within the command timeout. */
  call<T>(send: (done: (err: Error | ZkException | null, value: T) => void) => void): Promise<T> {
    if (this.state === "expired") return Promise.reject(new ZkCallError("session-expired", "the session has expired"));
    if (this.state === "closed") return Promise.reject(new ZkCallError("conn-refused", "the session was closed"));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new ZkCallError("timeout", `no answer within ${this.commandTimeoutMs} ms`)), this.commandTimeoutMs);
      send((err, value) => {
        clearTimeout(timer);
        this.lastHeard = Date.now();
        if (err) reject(classify(err));
        else resolve(value);
      });
    });
  }

  /** The node's stat, or null when it does not exist; `watch` fires once on its change. */
  exists(path: string, watch?: () => void): Promise<Stat | null> {
    return this.call<Stat | null>((done) => (watch ? this.client.exists(path, () => watch(), done) : this.client.exists(path, done)));
  }

  /** The node's data, or null when it does not exist; `watch` fires once on its change or delete (set only on a node that exists). */
  data(path: string, watch: () => void): Promise<Buffer | null> {
    return this.call<Buffer | null>((done) => this.client.getData(path, () => watch(), (err, data) => done(err, data ?? Buffer.alloc(0)))).catch((err) => {
      if (isZk(err, "NO_NODE")) return null;
      throw err;
    });
  }

  /**
   * After a lost connection, wait (at most a command timeout) until the package
   * has either reconnected the session or learned that it expired; the state then.
   */
  async settle(): Promise<SessionState> {
    const end = Date.now() + this.commandTimeoutMs;
    while (this.state === "disconnected" && Date.now() < end) await sleep(20);
    return this.state;
  }

  /** End the session: the server deletes its ephemeral nodes once it hears of it (or when it expires). */
  close(): void {
    this.end("closed");
  }

  private end(state: "expired" | "closed"): void {
    if (this.state === "closed" || this.state === "expired") return;
    this.state = state;
    clearInterval(this.probe);
    this.client.close();
  }

  private watchReads(): void {
    const timeout = this.timeoutMs;
    this.probe = setInterval(() => {
      if (this.state !== "connected") return;
      if (Date.now() - this.lastHeard > (2 * timeout) / 3) {
        // The package's own connection, closed as its read timeout would: pending
        // requests fail with CONNECTION_LOSS and it connects to the next server.
        (this.client as unknown as { connectionManager?: { socket?: { destroy(): void } } }).connectionManager?.socket?.destroy();
        this.lastHeard = Date.now();
        return;
      }
      this.client.exists("/", () => (this.lastHeard = Date.now()));
    }, Math.max(50, Math.floor(timeout / 3)));
    this.probe.unref();
  }
}

function classify(err: Error | ZkException): ZkCallError | ZkException {
  const code = (err as ZkException).code;
  if (code === Exception.SESSION_EXPIRED) return new ZkCallError("session-expired", String(err));
  if (code === Exception.CONNECTION_LOSS) return new ZkCallError("conn-lost", String(err));
  return err as ZkException;
}

/**
 * Bring the server `client`'s session reached up to date, so that a read after
 * it sees every write committed before it, another client's through another
 * server included: ZooKeeper's reads are answered by that one server and are not
 * linearizable. The Java client's sync() does this; node-zookeeper-client has
 * none, so a transaction that only checks `path` stands in for it: a multi is a
 * write request, ordered through the leader, and answered only after the
 * session's server has applied everything committed before it. It changes
 * nothing, and `path` missing (NO_NODE) is no error here.
 */
export function catchUp(client: Client, path: string, done: (err: Error | ZkException | null) => void): void {
  client.transaction().check(path).commit((err) => done(err && !isZk(err, "NO_NODE") ? err : null));
}

/** Whether an error is ZooKeeper's `code` (NO_NODE, NODE_EXISTS, ...). */
export const isZk = (err: unknown, code: "NO_NODE" | "NODE_EXISTS" | "NOT_EMPTY" | "NO_AUTH"): boolean => (err as ZkException)?.code === Exception[code];

/** A czxid (8 bytes, epoch in the high half) as a number: exact while epochs stay below 2^21. */
export const zxid = (b: Buffer): number => Number(b.readBigUInt64BE(0));
