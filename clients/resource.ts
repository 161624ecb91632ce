// The client of the protected resource (resource/). Like the lock clients, it
// returns `fail` only when the resource certainly did not apply the request (it
// refused a stale fence), and throws when the outcome is unknown (timeout,
// connection lost), so that the workload can record an `info` in one place.
import { Agent, request, type IncomingMessage } from "node:http";
import { MAX_BODY_BYTES } from "../resource/index.ts";

/** The resource refused the request because a newer fence had been accepted. */
export interface StaleFence {
  type: "fail";
  error: "stale-fence";
  /** The highest fence the resource had accepted on the key before. */
  seen: number;
  /** The fence this request carried. */
  got: number;
}

/** A fencing resource refused a write whose hold has no token (Redlock with --fence-source none). */
export interface NoFence {
  type: "fail";
  error: "no-fence";
  /** The highest fence the resource had accepted on the key before, null if none. */
  seen: number | null;
  got: null;
}

export type WriteOutcome = { type: "ok"; fence: number | null } | StaleFence | NoFence;

/** `fence`: the highest fence the resource has accepted on the key, null if none. */
export type ReadOutcome = { type: "ok"; data: unknown; fence: number | null } | StaleFence;

export interface WriteRequest {
  owner: string;
  /** null: the hold has no token; sent as `X-Fence-Token: none`. */
  fence: number | null;
  process: number;
  data: unknown;
}

export interface ReadRequest {
  process: number;
  owner?: string;
  /** With a fence, and a resource started with fenced reads, the read advances the key's fence. */
  fence?: number;
}

export interface RequestOptions {
  timeoutMs?: number;
}

/**
 * The outcome of a request is unknown: it may or may not have been applied.
 * `code` is the history's `error` value: "timeout", "conn-refused", "conn-reset",
 * "unreachable", "server-error", "bad-response" or "network". ("conn-refused" is
 * the one code that proves the request never arrived.)
 */
export class ResourceUnavailable extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "ResourceUnavailable";
  }
}

/** The resource answered 400: our request was malformed, which is a bug here, not a fault of the run. */
export class ResourceClientBug extends Error {
  readonly code = "bad-request";
  constructor(message: string) {
    super(message);
    this.name = "ResourceClientBug";
  }
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: "conn-refused",
  ECONNRESET: "conn-reset",
  EPIPE: "conn-reset",
  ECONNABORTED: "conn-reset",
  ETIMEDOUT: "timeout",
  EHOSTUNREACH: "unreachable",
  ENETUNREACH: "unreachable",
};

export class ResourceClient {
  private readonly agent = new Agent({ keepAlive: true });
  private readonly timeoutMs: number;

  constructor(
    /** e.g. http://127.0.0.1:4100 (ResourceHandle.url) */
    readonly baseUrl: string,
    opts: RequestOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 5_000;
    this.baseUrl = baseUrl.replace(/\/+$/, "");
  }

  async write(key: string, w: WriteRequest, opts: RequestOptions = {}): Promise<WriteOutcome> {
    const headers: Record<string, string> = {
      "Content-Type": "application/json",
      "X-Fence-Token": w.fence === null ? "none" : String(w.fence),
      "X-Lock-Owner": w.owner,
      "X-Process": String(w.process),
    };
    const body = JSON.stringify(w.data ?? null);
    // The resource would refuse it unread, and might close the connection before
    // this side has even finished sending: refuse it here, where it is clearly ours.
    if (Buffer.byteLength(body) > MAX_BODY_BYTES) {
      throw new ResourceClientBug(`write data of ${Buffer.byteLength(body)} bytes exceeds the resource's limit of ${MAX_BODY_BYTES}`);
    }
    const a = await this.send("PUT", key, headers, body, opts);
    if (a.status === 200) return { type: "ok", fence: a.body.fence === null ? null : num(a, "fence") };
    if (a.status === 409 && w.fence === null) return { type: "fail", error: "no-fence", seen: a.body.seen === null ? null : num(a, "seen"), got: null };
    return this.refusal(a);
  }

  async read(key: string, r: ReadRequest, opts: RequestOptions = {}): Promise<ReadOutcome> {
    const headers: Record<string, string> = { "X-Process": String(r.process) };
    if (r.owner !== undefined) headers["X-Lock-Owner"] = r.owner;
    if (r.fence !== undefined) headers["X-Fence-Token"] = String(r.fence);
    const a = await this.send("GET", key, headers, undefined, opts);
    if (a.status === 200) {
      if (!("data" in a.body)) throw badResponse(a, "no data");
      return { type: "ok", data: a.body.data, fence: a.body.fence === null ? null : num(a, "fence") };
    }
    return this.refusal(a);
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  private refusal(a: Answer): StaleFence {
    if (a.status === 409) return { type: "fail", error: "stale-fence", seen: num(a, "seen"), got: num(a, "got") };
    if (a.status === 400) throw new ResourceClientBug(`the resource refused a malformed request: ${String(a.body.error)}`);
    // 500 (it could not log the decision) or a route we should not have used:
    // whatever happened, this client cannot say it did not.
    throw new ResourceUnavailable("server-error", `resource answered ${a.status}: ${String(a.body.error ?? JSON.stringify(a.body))}`);
  }

  private send(method: string, key: string, headers: Record<string, string>, body: string | undefined, opts: RequestOptions): Promise<Answer> {
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const url = `${this.baseUrl}/r/${encodeURIComponent(key)}`;
    if (body !== undefined) headers["Content-Length"] = String(Buffer.byteLength(body));
    return new Promise((resolve, reject) => {
      let done = false;
      let timedOut = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = (err: Error | null, answer?: Answer): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(answer as Answer);
      };
      const fail = (e: NodeJS.ErrnoException): void => {
        if (timedOut) return settle(new ResourceUnavailable("timeout", `${method} ${url}: no answer within ${timeoutMs} ms`));
        const code = (e.code && NETWORK_CODES[e.code]) ?? "network";
        settle(new ResourceUnavailable(code, `${method} ${url}: ${e.message}`, { cause: e }));
      };
      let req: ReturnType<typeof request>;
      try {
        req = request(url, { method, headers, agent: this.agent });
      } catch (e) {
        // Node refuses to send what HTTP cannot carry (an owner with a newline, say).
        return settle(new ResourceClientBug(`cannot send ${method} ${url}: ${(e as Error).message}`));
      }
      timer = setTimeout(() => {
        timedOut = true;
        req.destroy(new Error("timeout"));
      }, timeoutMs);
      req.on("error", fail);
      req.on("response", (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", fail);
        res.on("close", () => {
          if (!res.complete) fail(Object.assign(new Error("connection closed mid-answer"), { code: "ECONNRESET" }));
        });
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            return settle(new ResourceUnavailable("bad-response", `${method} ${url}: answer ${res.statusCode} is not JSON: ${text.slice(0, 200)}`));
          }
          if (typeof parsed !== "object" || parsed === null) {
            return settle(new ResourceUnavailable("bad-response", `${method} ${url}: answer ${res.statusCode} is not an object: ${text.slice(0, 200)}`));
          }
          settle(null, { status: res.statusCode ?? 0, body: parsed as Record<string, unknown> });
        });
      });
      req.end(body);
    });
  }
}

function num(a: Answer, field: string): number {
  const v = a.body[field];
  if (typeof v !== "number") throw badResponse(a, `${field} is not a number`);
  return v;
}

function badResponse(a: Answer, why: string): ResourceUnavailable {
  return new ResourceUnavailable("bad-response", `resource answered ${a.status} ${JSON.stringify(a.body)}: ${why}`);
}
