// The resource's HTTP face. Each decision is judged, logged and committed by its
// decider (decider.ts): in the resource's memory, in one synchronous stretch,
// logged before it is committed; or by a database, logged once committed, with
// the place the database gave it among its key's decisions (committed.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { DecisionLog, DecisionFields } from "./decision-log.ts";
import type { Decider, LogDecision } from "./decider.ts";
import type { ResourceMetrics } from "./metrics.ts";
import type { ResourceDecision } from "../store/events.ts";
import {
  isRefusal,
  bodyData,
  MAX_BODY_BYTES,
  readHeaders,
  route,
  writeHeaders,
  type ReadHeaders,
  type Refusal,
  type WriteHeaders,
} from "./request.ts";

export interface ResourceParts {
  decider: Decider;
  log: DecisionLog;
  metrics: ResourceMetrics;
  /** Told of each decision once it is logged (--otel: a lock.decision span); must not throw. */
  decided?: (d: ResourceDecision) => void;
}

type Body = { kind: "body"; bytes: Buffer } | { kind: "too-large" } | { kind: "gone" };

// Idle keep-alive connections are closed by the server after this long. Far longer
// than any pause between one client's requests, because a client that reuses a
// connection at the moment the server closes it sees a reset and must record an
// `info` it did not deserve.
const KEEP_ALIVE_MS = 120_000;

export function createResourceServer(parts: ResourceParts): Server {
  const server = createServer((req, res) => {
    handle(parts, req, res).catch((e: unknown) => {
      process.stderr.write(`resource: request failed: ${(e as Error).stack ?? String(e)}\n`);
      if (!res.headersSent) send(res, 500, { error: `internal error: ${(e as Error).message}` });
    });
  });
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = KEEP_ALIVE_MS + 5_000;
  server.requestTimeout = KEEP_ALIVE_MS + 10_000;
  // Requests HTTP itself cannot parse get the same JSON shape as the others.
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
    if (err.code === "ECONNRESET" || !socket.writable) return socket.destroy();
    const body = JSON.stringify({ error: `malformed HTTP request: ${err.code ?? err.message}` });
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
  return server;
}

async function handle(parts: ResourceParts, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const r = route(req.method, req.url);
  if (isRefusal(r)) return refuse(parts, res, r);
  if (r.kind === "metrics") {
    const { contentType, text } = await parts.metrics.scrape();
    res.writeHead(200, { "Content-Type": contentType });
    res.end(text);
    return;
  }
  if (r.kind === "read") {
    const h = readHeaders(req.headers);
    if (isRefusal(h)) return refuse(parts, res, h);
    return await read(parts, res, r.key, h);
  }
  const h = writeHeaders(req.headers);
  if (isRefusal(h)) return refuse(parts, res, h);
  const body = await readBody(req);
  // The client went away before its request was whole: nothing was asked, so
  // nothing is decided.
  if (body.kind === "gone") return;
  if (body.kind === "too-large") {
    // The rest of the body stays unread; closing the connection discards it.
    res.setHeader("Connection", "close");
    return refuse(parts, res, { status: 400, message: `body larger than ${MAX_BODY_BYTES} bytes` });
  }
  const parsed = bodyData(body.bytes, req.headers["content-type"]);
  if (isRefusal(parsed)) return refuse(parts, res, parsed);
  await write(parts, res, r.key, h, parsed.data);
}

async function write(parts: ResourceParts, res: ServerResponse, key: string, h: WriteHeaders, data: unknown): Promise<void> {
  const v = await decide(parts, res, (log) => parts.decider.write(key, h.fence, data, log), { op: "write", key, process: h.process, owner: h.owner, fence: h.fence, data });
  if (!v) return;
  if (v.accepted) {
    parts.metrics.writesApplied.inc();
    send(res, 200, { ok: true, fence: h.fence });
  } else {
    parts.metrics.staleRejections.inc();
    send(res, 409, { error: h.fence === null ? "no fencing token" : "stale fencing token", seen: v.maxBefore, got: h.fence });
  }
}

async function read(parts: ResourceParts, res: ServerResponse, key: string, h: ReadHeaders): Promise<void> {
  if (h.process === null) {
    // An onlooker's unfenced read: it decides nothing and belongs to no client.
    const p = await parts.decider.peek(key);
    parts.metrics.reads.inc();
    return send(res, 200, { data: p.data, fence: p.maxSeen });
  }
  const v = await decide(parts, res, (log) => parts.decider.read(key, h.fence, log), { op: "read", key, process: h.process, owner: h.owner, fence: h.fence, data: null });
  if (!v) return;
  if (v.accepted) {
    parts.metrics.reads.inc();
    send(res, 200, { data: v.data, fence: v.maxSeen });
  } else {
    parts.metrics.staleRejections.inc();
    send(res, 409, { error: "stale fencing token", seen: v.maxBefore, got: h.fence });
  }
}

class Unlogged extends Error {}

/**
 * Has the decider decide and log the decision. A memory decision that could not
 * be logged is not committed and the client hears 500, so the log and the state
 * never disagree; so does one the database could not make, or whose commit's
 * outcome is unknown (logged as such).
 */
async function decide<V>(
  parts: ResourceParts,
  res: ServerResponse,
  run: (log: LogDecision) => Promise<V>,
  d: Omit<DecisionFields, "max_before" | "accepted" | "fencing">,
): Promise<V | null> {
  const log: LogDecision = (v) => {
    try {
      const semaphore = v.higher === undefined ? {} : { permits: parts.decider.permits, higher: v.higher };
      const order = v.order === undefined ? {} : { order: v.order };
      const logged = parts.log.append({ ...d, ...("data" in v ? { data: v.data } : {}), max_before: v.maxBefore, accepted: v.accepted, fencing: parts.decider.fencing, ...semaphore, ...order });
      parts.decided?.(logged);
    } catch (e) {
      throw new Unlogged((e as Error).message);
    }
  };
  try {
    return await run(log);
  } catch (e) {
    const what = e instanceof Unlogged ? "log the decision" : "decide";
    process.stderr.write(`resource: could not ${what}: ${(e as Error).message}\n`);
    send(res, 500, { error: `could not ${what}: ${(e as Error).message}` });
    return null;
  }
}

function refuse(parts: ResourceParts, res: ServerResponse, r: Refusal): void {
  parts.metrics.badRequests.inc();
  if (r.allow) res.setHeader("Allow", r.allow);
  send(res, r.status, { error: r.message });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<Body> {
  if (Number(req.headers["content-length"]) > MAX_BODY_BYTES) return Promise.resolve({ kind: "too-large" });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (b: Body): void => {
      if (settled) return;
      settled = true;
      req.off("data", onData);
      resolve(b);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.pause();
        settle({ kind: "too-large" });
      } else chunks.push(chunk);
    };
    req.on("data", onData);
    req.on("end", () => settle({ kind: "body", bytes: Buffer.concat(chunks, size) }));
    req.on("error", () => settle({ kind: "gone" }));
    req.on("close", () => settle({ kind: "gone" }));
  });
}
