// OTLP/HTTP's trace endpoint (POST /v1/traces), as the Collector's otlphttp
// exporter and the SDKs' exporters call it: protobuf or JSON bodies, gzip or
// not, each answered in its own encoding. A span that breaks the conventions is
// rejected alone and counted in partial_success, so one bad span does not make
// the sender retry (and duplicate) the rest; a body that cannot be read at all
// is 400, which OTLP tells senders not to retry.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { gunzip } from "node:zlib";
import { promisify } from "node:util";
import { BadInput } from "../../lib/exit.ts";
import type { Scraped } from "../../lib/index.ts";
import { requestSpans, type RequestSpans } from "../otlp-json.ts";
import { decodeTraceRequest, encodeRpcStatus, encodeTraceResponse } from "../otlp-proto.ts";
import { checkSpan } from "../to-history.ts";

const gunzipAsync = promisify(gunzip);
const PROTOBUF = "application/x-protobuf";
const JSON_TYPE = "application/json";
const SHUTTING_DOWN = "shutting down: the live check is settling its last windows";
/** google.rpc.Code INVALID_ARGUMENT. */
const INVALID_ARGUMENT = 3;

export interface Receiver {
  /** Called with a request's spans once read; resolves true when they are kept (spooled) and the request may be answered 200, false when the receiver began shutting down while the body came in. */
  accept(read: RequestSpans): Promise<boolean>;
  metrics(): Promise<Scraped>;
  /** True once the receiver is shutting down: requests are answered 503. */
  closing(): boolean;
  counted(status: number): void;
  maxBody: number;
}

class Refusal {
  constructor(readonly status: number, readonly message: string) {}
}

export function receiverServer(r: Receiver): Server {
  let requests = 0;
  return createServer((req, res) => {
    const n = ++requests;
    handle(r, req, res, n).catch((err) => answer(r, res, 500, "text/plain", `internal error: ${(err as Error).message}\n`));
  });
}

async function handle(r: Receiver, req: IncomingMessage, res: ServerResponse, n: number): Promise<void> {
  const path = (req.url ?? "/").split("?")[0];
  if (req.method === "GET" && path === "/metrics") {
    const scraped = await r.metrics();
    return answer(r, res, 200, scraped.contentType, scraped.text);
  }
  if (path !== "/v1/traces") return refuse(r, req, res, undefined, new Refusal(404, `no ${path} here: OTLP traces go to POST /v1/traces, metrics are at GET /metrics`));
  if (req.method !== "POST") return refuse(r, req, res, undefined, new Refusal(405, `${req.method} ${path}: OTLP traces are POSTed`));
  if (r.closing()) return refuse(r, req, res, undefined, new Refusal(503, SHUTTING_DOWN));
  const type = (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  if (type !== PROTOBUF && type !== JSON_TYPE) return refuse(r, req, res, undefined, new Refusal(415, `content type ${JSON.stringify(type)}: send ${PROTOBUF} or ${JSON_TYPE}`));
  const asJson = type === JSON_TYPE;
  let read: RequestSpans;
  try {
    const body = await bodyOf(req, r.maxBody);
    let doc: unknown;
    try {
      doc = asJson ? JSON.parse(body.toString("utf8")) : decodeTraceRequest(body);
    } catch (err) {
      throw new Refusal(400, `the body is not an OTLP ExportTraceServiceRequest in ${type}: ${(err as Error).message}`);
    }
    read = requestSpans(doc, `request ${n}`, checkSpan);
  } catch (err) {
    if (err instanceof Refusal) return refuse(r, req, res, asJson, err);
    if (err instanceof BadInput) return refuse(r, req, res, asJson, new Refusal(400, err.message));
    throw err;
  }
  if (!(await r.accept(read))) return refuse(r, req, res, undefined, new Refusal(503, SHUTTING_DOWN));
  const message = read.rejected ? `${read.rejected} span(s) rejected; the first: ${read.firstProblem}` : undefined;
  if (asJson) answer(r, res, 200, JSON_TYPE, JSON.stringify(read.rejected ? { partialSuccess: { rejectedSpans: String(read.rejected), errorMessage: message } } : {}));
  else answer(r, res, 200, PROTOBUF, Buffer.from(encodeTraceResponse(read.rejected, message)));
}

/** The body, gunzipped if it says so; Refusal 413 past `max` bytes (before or after gunzip), 415 for an encoding other than gzip. */
async function bodyOf(req: IncomingMessage, max: number): Promise<Buffer> {
  const encoding = (req.headers["content-encoding"] ?? "identity").trim().toLowerCase();
  if (encoding !== "gzip" && encoding !== "identity") throw new Refusal(415, `content encoding ${JSON.stringify(encoding)}: send gzip or none`);
  const tooLarge = new Refusal(413, `the body is over ${max} bytes (--max-body)`);
  if (Number(req.headers["content-length"] ?? 0) > max) throw tooLarge;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw tooLarge;
    chunks.push(chunk as Buffer);
  }
  const raw = Buffer.concat(chunks);
  if (encoding === "identity") return raw;
  try {
    // The limit holds for what the body unpacks to, too: a small gzip can unpack to gigabytes.
    return await gunzipAsync(raw, { maxOutputLength: max });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") throw tooLarge;
    throw new Refusal(400, `the body says gzip and is not: ${(err as Error).message}`);
  }
}

/** A refused request, with a google.rpc.Status in the request's encoding (plain text when it had none we know). */
function refuse(r: Receiver, req: IncomingMessage, res: ServerResponse, asJson: boolean | undefined, why: Refusal): void {
  // A refusal before the body was read: say the connection ends, so the unread body is not taken for the next request.
  if (!req.complete) res.setHeader("Connection", "close");
  if (asJson === true) answer(r, res, why.status, JSON_TYPE, JSON.stringify({ code: INVALID_ARGUMENT, message: why.message }));
  else if (asJson === false) answer(r, res, why.status, PROTOBUF, Buffer.from(encodeRpcStatus(INVALID_ARGUMENT, why.message)));
  else answer(r, res, why.status, "text/plain; charset=utf-8", why.message + "\n");
}

function answer(r: Receiver, res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  r.counted(status);
  if (res.headersSent) return;
  res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}
