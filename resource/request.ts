// Reading what a request asks for, and refusing what is malformed before anything
// is decided. A refusal is a value naming what is wrong; the server answers it and
// changes nothing, so a client bug can never show up in resource.ndjson.
import type { IncomingHttpHeaders } from "node:http";

export interface Refusal {
  status: 400 | 404 | 405;
  message: string;
  /** For 405: the methods the route allows. */
  allow?: string;
}

export type Route = { kind: "metrics" } | { kind: "write"; key: string } | { kind: "read"; key: string };

export interface WriteHeaders {
  /** null: the client said `none`, a hold its lock service gave no fencing token. */
  fence: number | null;
  owner: string;
  process: number;
}

export interface ReadHeaders {
  fence: number | null;
  owner: string;
  /** null: an onlooker (curl, a dashboard), no client of the run: answered, never logged. */
  process: number | null;
}

/** Bodies above this are refused unread: no client of ours sends anything close. */
export const MAX_BODY_BYTES = 64 * 1024;

const KEY = /^[A-Za-z0-9._:-]{1,200}$/;
const NATURAL = /^\d+$/;
const INTEGER = /^-?\d+$/;

export function isRefusal(x: unknown): x is Refusal {
  return typeof x === "object" && x !== null && "status" in x && "message" in x;
}

export function route(method: string | undefined, url: string | undefined): Route | Refusal {
  // The query string carries nothing; the path alone names the route.
  const path = (url ?? "").split("?", 1)[0];
  if (path === "/metrics") {
    return method === "GET" ? { kind: "metrics" } : { status: 405, message: `method ${method} not allowed on /metrics`, allow: "GET" };
  }
  if (!path.startsWith("/r/")) return { status: 404, message: `no such route: ${path}` };
  if (method !== "GET" && method !== "PUT") {
    return { status: 405, message: `method ${method} not allowed on /r/{key}`, allow: "GET, PUT" };
  }
  // The client escapes the key (encodeURIComponent: a ':' arrives as %3A, and
  // --deploy external's keys are named fencecheck:<run>:k0), so it is unescaped
  // before the check; an escaped '/' or space still fails it.
  let key: string;
  try {
    key = decodeURIComponent(path.slice("/r/".length));
  } catch {
    key = path.slice("/r/".length);
  }
  if (!KEY.test(key)) {
    return { status: 400, message: `bad key ${JSON.stringify(key)}: want 1 to 200 characters of A-Z a-z 0-9 . _ : -` };
  }
  return method === "PUT" ? { kind: "write", key } : { kind: "read", key };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  // Node joins repeated custom headers with ", ", which the number checks refuse.
  return Array.isArray(v) ? v.join(", ") : v;
}

// A write must say which token it carries; `none` says, explicitly, that its hold
// has none (Redlock issues no fence), which a fencing resource can then refuse. A
// missing header stays a malformed request: it is a client bug, not a hold.
function fenceHeader(headers: IncomingHttpHeaders, required: boolean): number | null | Refusal {
  const raw = header(headers, "x-fence-token");
  if (raw === undefined) return required ? { status: 400, message: "missing X-Fence-Token header (send \"none\" for a hold without a token)" } : null;
  if (raw === "none") return null;
  const n = Number(raw);
  if (!NATURAL.test(raw) || !Number.isSafeInteger(n)) {
    return { status: 400, message: `X-Fence-Token must be an integer >= 0 or "none", got ${JSON.stringify(raw)}` };
  }
  return n;
}

function processHeader(headers: IncomingHttpHeaders): number | Refusal {
  const raw = header(headers, "x-process");
  if (raw === undefined) return { status: 400, message: "missing X-Process header" };
  const n = Number(raw);
  if (!INTEGER.test(raw) || !Number.isSafeInteger(n)) {
    return { status: 400, message: `X-Process must be an integer, got ${JSON.stringify(raw)}` };
  }
  return n;
}

export function writeHeaders(headers: IncomingHttpHeaders): WriteHeaders | Refusal {
  const fence = fenceHeader(headers, true);
  if (isRefusal(fence)) return fence;
  const owner = header(headers, "x-lock-owner");
  if (!owner) return { status: 400, message: "missing or empty X-Lock-Owner header" };
  const process = processHeader(headers);
  if (isRefusal(process)) return process;
  return { fence, owner, process };
}

// A read without X-Process comes from someone looking (curl, a dashboard), not from
// a client of the run: it is answered but not logged, since resource.ndjson records
// the run's clients, each line naming one. A fenced read moves the key's fence, so
// it must say whose it is.
export function readHeaders(headers: IncomingHttpHeaders): ReadHeaders | Refusal {
  const fence = fenceHeader(headers, false);
  if (isRefusal(fence)) return fence;
  if (header(headers, "x-process") === undefined) {
    if (fence !== null) return { status: 400, message: "a read with X-Fence-Token needs X-Process: it moves the key's fence, so it is logged as that client's" };
    return { fence, owner: header(headers, "x-lock-owner") ?? "", process: null };
  }
  const process = processHeader(headers);
  if (isRefusal(process)) return process;
  return { fence, owner: header(headers, "x-lock-owner") ?? "", process };
}

const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i;

/**
 * The data a body carries. Declared JSON (Content-Type application/json) must
 * parse; any other body is JSON when it parses as such (our clients' integers and
 * strings) and otherwise its text, so `curl -d hello` writes "hello".
 */
export function bodyData(body: Buffer, contentType: string | undefined): { data: unknown } | Refusal {
  const text = body.toString("utf8");
  try {
    return { data: JSON.parse(text) as unknown };
  } catch (e) {
    if (contentType !== undefined && JSON_TYPE.test(contentType)) return { status: 400, message: `body is not JSON (Content-Type ${contentType}): ${(e as Error).message}` };
    return { data: text };
  }
}
