// The HTTP face: Toxiproxy's routes, status codes and JSON shapes (docs/fault-proxy.md),
// so `toxiproxy-node-client` drives this server as it would drive Toxiproxy.
//
// Requests run one at a time. Toxiproxy takes a lock per operation; one queue is
// simpler and the API is never busy enough for it to matter.
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ApiError, asApiError, badBody, invalidToxicType } from "./api-error.ts";
import { ProxyCollection } from "./collection.ts";
import { OWN_TOXIC_TYPES, parseNewToxic } from "./toxics.ts";
import { PROXY_VERSION } from "./version.ts";


const MAX_BODY = 1 << 20;
const BODY_TIMEOUT_MS = 10_000;

export interface ApiServerOptions {
  host?: string;
  port: number;
  /** One line per request that changed something, for the process's log. */
  log?: (line: string) => void;
  /**
   * Know only Toxiproxy's own toxics, answering 400 to block_from as a real
   * Toxiproxy does: for seeing what a run does against one, without one.
   */
  toxiproxyOnly?: boolean;
}

export interface RunningApiServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

interface Answer {
  status: number;
  /** undefined: no body at all (204), as the npm client parses any body as JSON. */
  body?: unknown;
  /** A body that is not JSON (/metrics), sent as it is. */
  text?: { contentType: string; content: string };
}

const ok = (body: unknown): Answer => ({ status: 200, body });
const noContent: Answer = { status: 204 };

export async function startApiServer(opts: ApiServerOptions): Promise<RunningApiServer> {
  const host = opts.host ?? "127.0.0.1";
  const proxies = new ProxyCollection();
  let queue: Promise<unknown> = Promise.resolve();

  const server = http.createServer((req, res) => {
    const work = queue.then(() => handle(proxies, req, opts.toxiproxyOnly ?? false)).catch((e: unknown) => errorAnswer(asApiError(e)));
    queue = work;
    void work.then((answer) => {
      send(res, answer);
      if (opts.log && req.method !== "GET") opts.log(`${req.method} ${req.url} ${answer.status}`);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port: opts.port, exclusive: true }, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":") ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    close(): Promise<void> {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // fetch keeps connections alive; they would hold close() open for seconds.
        server.closeAllConnections();
        await queue.catch(() => {});
        await proxies.closeAll();
        await closed;
      })();
      return closing;
    },
  };
}

async function handle(proxies: ProxyCollection, req: IncomingMessage, toxiproxyOnly: boolean): Promise<Answer> {
  const method = req.method ?? "GET";
  const path = new URL(req.url ?? "/", "http://x").pathname;
  let parts: string[];
  try {
    parts = path.split("/").slice(1).map(decodeURIComponent);
  } catch {
    return notFound();
  }
  const body = (): Promise<unknown> => readJson(req);

  // /version, /metrics, /reset, /populate, /proxies
  if (parts.length === 1) {
    const [what] = parts;
    if (what === "version") return method === "GET" ? ok({ version: PROXY_VERSION }) : notAllowed();
    // Toxiproxy serves Prometheus text here too (its own metric names); ours are fencecheck_proxy_*.
    if (what === "metrics") {
      if (method !== "GET") return notAllowed();
      const { contentType, text } = await proxies.metrics.scrape();
      return { status: 200, text: { contentType, content: text } };
    }
    if (what === "reset") return method === "POST" ? (await proxies.reset(), noContent) : notAllowed();
    if (what === "populate") {
      if (method !== "POST") return notAllowed();
      const answer = await proxies.populate(await body());
      return { status: answer.status, body: answer.body };
    }
    if (what === "proxies") {
      if (method === "GET") return ok(proxies.all());
      if (method === "POST") return { status: 201, body: await proxies.create(await body()) };
      return notAllowed();
    }
  }
  if (parts[0] !== "proxies" || parts.length < 2 || parts.length > 4 || parts.some((p) => p === "")) return notFound();
  const name = parts[1]!;

  // /proxies/{p}
  if (parts.length === 2) {
    if (method === "GET") return ok(proxies.get(name).json());
    if (method === "POST" || method === "PATCH") return ok(await proxies.update(name, await body()));
    if (method === "DELETE") return (await proxies.remove(name), noContent);
    return notAllowed();
  }
  if (parts[2] !== "toxics") return notFound();

  // /proxies/{p}/toxics
  if (parts.length === 3) {
    if (method === "GET") return ok(proxies.get(name).toxicList());
    if (method === "POST") {
      const proxy = proxies.get(name);
      // 200, not 201: Toxiproxy answers a new toxic with a plain OK.
      const toxic = parseNewToxic(await body());
      if (toxiproxyOnly && OWN_TOXIC_TYPES.has(toxic.type)) throw invalidToxicType();
      return ok(proxy.addToxic(toxic));
    }
    return notAllowed();
  }

  // /proxies/{p}/toxics/{t}
  const toxic = parts[3]!;
  if (method === "GET") return ok(proxies.get(name).getToxic(toxic));
  if (method === "POST" || method === "PATCH") {
    const proxy = proxies.get(name);
    proxy.getToxic(toxic); // 404 before a body error, as Toxiproxy
    return ok(proxy.updateToxic(toxic, await body()));
  }
  if (method === "DELETE") return (proxies.get(name).removeToxic(toxic), noContent);
  return notAllowed();
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Requests run one at a time, so a client that stalls mid-body would stall the
  // API; Toxiproxy's server has a 15 s read timeout for the same reason.
  const timer = setTimeout(() => req.destroy(new Error("timed out reading the body")), BODY_TIMEOUT_MS);
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY) throw badBody("larger than 1 MiB");
      chunks.push(chunk);
    }
  } catch (e) {
    throw e instanceof ApiError ? e : badBody((e as Error).message);
  } finally {
    clearTimeout(timer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  // Go's decoder says EOF for an empty body; so do we.
  if (text.trim() === "") throw badBody("EOF");
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw badBody((e as Error).message);
  }
}

// Toxiproxy writes its errors with Go's http.Error: the JSON as plain text, with a newline.
function errorAnswer(e: ApiError): Answer {
  return { status: e.status, text: { contentType: "text/plain; charset=utf-8", content: `${JSON.stringify(e.toJSON())}\n` } };
}

// A route that does not exist, or a method a route does not take, is answered as
// Toxiproxy's router (gorilla/mux) answers it: plain text, and no body at all.
function notFound(): Answer {
  return { status: 404, text: { contentType: "text/plain; charset=utf-8", content: "404 page not found\n" } };
}

function notAllowed(): Answer {
  return { status: 405 };
}

function send(res: ServerResponse, answer: Answer): void {
  if (res.destroyed) return;
  try {
    if (answer.text !== undefined) {
      res.writeHead(answer.status, { "Content-Type": answer.text.contentType, "Content-Length": Buffer.byteLength(answer.text.content) }).end(answer.text.content);
      return;
    }
    if (answer.body === undefined) {
      res.writeHead(answer.status).end();
      return;
    }
    const text = JSON.stringify(answer.body);
    res.writeHead(answer.status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) }).end(text);
  } catch {
    // The client went away mid-answer; the proxies' state is what matters, and it is kept.
    res.destroy();
  }
}
