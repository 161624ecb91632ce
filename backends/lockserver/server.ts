// The lock server's TCP side: a connection's lines become requests, handled one
// at a time in the order they arrived (Node's event loop is the seed's request
// queue: each request is decided, persisted and answered before the next is
// read), and answers go to whichever connection is waiting for them.
import { createServer, type Server, type Socket } from "node:net";
import { isBad, parseRequest, type Request, type RequestId } from "./protocol.ts";
import { LockTable, type Answer, type Change } from "./state.ts";

/** A request still to be answered: on which connection, under which id. */
interface Pending {
  socket: Socket;
  id: RequestId;
}

export interface LockServerOptions {
  /** Told of each change before its answer leaves (persistence), and what to start from. */
  record?: (c: Change) => void;
  replay?: Change[];
  /** The server's monotonic clock in ms (tests may pass their own). */
  now?: () => number;
}

/** Longest line a client may send: a request is a hundred bytes or so. */
const MAX_LINE = 64 * 1024;

export function createLockServer(opts: LockServerOptions = {}): { server: Server; table: LockTable<Pending> } {
  const now = opts.now ?? (() => performance.now());
  const table = new LockTable<Pending>(opts.record);
  for (const c of opts.replay ?? []) table.replay(c, now());
  let timer: NodeJS.Timeout | null = null;

  const send = (socket: Socket, reply: object): void => {
    if (!socket.destroyed) socket.write(JSON.stringify(reply) + "\n");
  };
  const answer = (answers: Array<Answer<Pending>>): void => {
    for (const a of answers) send(a.to.socket, { id: a.to.id, ...a.reply });
    schedule();
  };
  // One timer, for the next wait or lease that runs out: a waiter is granted when the lease before it ends, not at the next request.
  const schedule = (): void => {
    if (timer) clearTimeout(timer);
    const next = table.nextDeadline();
    timer = next === null ? null : setTimeout(() => answer(table.expire(now())), Math.max(0, next - now()) + 1);
  };

  const handle = (socket: Socket, r: Request): void => {
    const to = { socket, id: r.id };
    if (r.op === "ping") return send(socket, { id: r.id, ok: true });
    if (r.op === "acquire") answer(table.acquire(to, r.key, r.owner, r.ttlMs, r.waitMs, now()));
    else if (r.op === "renew") answer(table.renew(to, r.key, r.owner, r.ttlMs, now()));
    else if (r.op === "fence") answer(table.nextFence(to, r.key));
    else answer(table.release(to, r.key, r.owner, now()));
  };

  const server = createServer((socket) => {
    socket.setNoDelay(true);
    let buffer = "";
    socket.on("data", (d) => {
      buffer += d.toString("utf8");
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (line === "") continue;
        const r = parseRequest(line);
        if (isBad(r)) send(socket, r);
        else handle(socket, r);
      }
      if (buffer.length > MAX_LINE) {
        send(socket, { id: null, ok: false, error: "bad-request", message: `a line longer than ${MAX_LINE} bytes` });
        buffer = "";
      }
    });
    // Its waiters have nobody to grant to: out of the queues, so the lock does not wait for them.
    socket.on("close", () => table.dropWaiters((p) => p.socket === socket));
    socket.on("error", () => {});
  });
  server.on("close", () => timer && clearTimeout(timer));
  return { server, table };
}
