// The lock server's wire protocol: newline-delimited JSON over TCP, one request
// a line, one reply a line carrying the request's id. Replies may come out of
// order (a queued acquire is answered when granted or when its wait runs out).
//
//   {"id":1,"op":"acquire","key":"k","owner":"c1-7","ttlMs":400,"waitMs":1200}
//   {"id":1,"queued":true,"ahead":2}              (at once, when it must wait; then, later:)
//   {"id":1,"ok":true,"fence":12,"ttlMs":400}      {"id":1,"ok":false,"error":"timeout"}
//   {"id":2,"op":"renew","key":"k","owner":"c1-7","ttlMs":400}
//   {"id":3,"op":"release","key":"k","owner":"c1-7"}   -> {"id":3,"ok":true,"released":true}
//   {"id":4,"op":"fence","key":"k"}                    -> {"id":4,"ok":true,"fence":13}
//   {"id":5,"op":"ping"}                               -> {"id":5,"ok":true}
//
// A release by an owner still waiting withdraws its wait: {"ok":true,"released":false},
// and its acquire is answered {"ok":false,"error":"withdrawn"}. "fence" takes the
// next number of the key's counter (the one grants count) without a grant.
//
// A request the server cannot read is answered {"id":…|null,"ok":false,
// "error":"bad-request","message":"<what is wrong>"}; it never ends the connection.
import { createConnection } from "node:net";

export type Request =
  | { id: RequestId; op: "acquire"; key: string; owner: string; ttlMs: number; waitMs: number }
  | { id: RequestId; op: "renew"; key: string; owner: string; ttlMs: number }
  | { id: RequestId; op: "release"; key: string; owner: string }
  | { id: RequestId; op: "fence"; key: string }
  | { id: RequestId; op: "ping" };

export type RequestId = number | string;

export interface BadRequest {
  id: RequestId | null;
  ok: false;
  error: "bad-request";
  message: string;
}

const OPS = ["acquire", "renew", "release", "fence", "ping"] as const;

/** The request a line holds, or the reply that says what is wrong with it. */
export function parseRequest(line: string): Request | BadRequest {
  let m: unknown;
  try {
    m = JSON.parse(line);
  } catch {
    return bad(null, "not JSON");
  }
  if (typeof m !== "object" || m === null || Array.isArray(m)) return bad(null, "not a JSON object");
  const o = m as Record<string, unknown>;
  const id = typeof o.id === "number" || typeof o.id === "string" ? o.id : null;
  if (id === null) return bad(null, "id must be a number or a string");
  if (!OPS.includes(o.op as (typeof OPS)[number])) return bad(id, `op must be one of ${OPS.join(", ")}, got ${JSON.stringify(o.op)}`);
  const op = o.op as (typeof OPS)[number];
  if (op === "ping") return { id, op };
  if (op === "fence") return typeof o.key === "string" && o.key !== "" ? { id, op, key: o.key } : bad(id, "key must be a non-empty string");
  for (const f of ["key", "owner"]) if (typeof o[f] !== "string" || o[f] === "") return bad(id, `${f} must be a non-empty string`);
  const key = o.key as string, owner = o.owner as string;
  if (op === "release") return { id, op, key, owner };
  if (!isCount(o.ttlMs, 1)) return bad(id, "ttlMs must be a whole number of ms, at least 1");
  const ttlMs = o.ttlMs as number;
  if (op === "renew") return { id, op, key, owner, ttlMs };
  if (!isCount(o.waitMs, 0)) return bad(id, "waitMs must be a whole number of ms, at least 0");
  return { id, op, key, owner, ttlMs, waitMs: o.waitMs as number };
}

const isCount = (v: unknown, min: number): boolean => typeof v === "number" && Number.isSafeInteger(v) && v >= min;
const bad = (id: RequestId | null, message: string): BadRequest => ({ id, ok: false, error: "bad-request", message });

export const isBad = (r: Request | BadRequest): r is BadRequest => "error" in r;

/** One request on a connection of its own, for a readiness check: the reply, or null when none came within timeoutMs. */
export function askOnce(host: string, port: number, request: Record<string, unknown>, timeoutMs: number): Promise<Record<string, unknown> | null> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    let buffer = "";
    const done = (reply: Record<string, unknown> | null): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reply);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    socket.on("error", () => done(null));
    socket.on("close", () => done(null));
    socket.on("connect", () => socket.write(JSON.stringify(request) + "\n"));
    socket.on("data", (d) => {
      buffer += d.toString("utf8");
      const nl = buffer.indexOf("\n");
      if (nl < 0) return;
      try {
        done(JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>);
      } catch {
        done(null);
      }
    });
  });
}
