// The messages of the adapter protocol (docs/adapter-protocol.md), as the harness
// reads them: every line an adapter program writes is checked here once, and
// anything that is not a message of the protocol is named, so the program can be
// killed with a sentence that says what it wrote and why that is wrong.
import { NOTICES, type NoticeKind } from "../../store/events.ts";
import type { LockKinds } from "../lock.ts";

export const PROTOCOL_VERSION = 1;

export type RenewMode = "explicit" | "automatic" | "none";
export const RENEW_MODES: readonly RenewMode[] = ["explicit", "automatic", "none"];

/** What the harness sends: a request with its id. */
export type Request =
  | { id: number; type: "init"; protocol: number; backend: string; endpoints: { name: string; host: string; port: number }[]; owner_prefix: string; ttl_ms: number; command_timeout_ms: number; seed: number; client: number }
  | { id: number; type: "acquire"; key: string; ttl_ms: number; wait_ms: number; mode?: "read" | "write"; reenter?: string; permits?: number }
  /** Withdraws the acquire `acquire` while it waits: the one request sent while another is outstanding. */
  | { id: number; type: "cancel"; acquire: number }
  | { id: number; type: "renew"; key: string; owner: string; fence: number | null; ttl_ms: number }
  | { id: number; type: "release"; key: string; owner: string; fence: number | null }
  | { id: number; type: "close" };

/** A request before it is given its id. */
export type RequestBody = Request extends infer R ? (R extends Request ? Omit<R, "id"> : never) : never;

export type Reply =
  | { type: "init_ok"; fences: boolean; renew: RenewMode; library?: string; kinds?: LockKinds }
  /** `fields`: the reply's own fields besides type, in_reply_to (and a fail's error). */
  | { type: "ok"; fields: Record<string, unknown> }
  | { type: "fail"; error: string; fields: Record<string, unknown> }
  | { type: "error"; error: string };

export interface NoticeMessage {
  f: NoticeKind;
  key?: string;
  owner?: string;
}

/** A line read: a reply to the request `inReplyTo`, a notice, or what is wrong with it. */
export type Line = { kind: "reply"; inReplyTo: number; reply: Reply } | { kind: "notice"; notice: NoticeMessage } | { kind: "bad"; why: string };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Reads one line of the program's standard output. */
export function readLine(text: string): Line {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    return { kind: "bad", why: "not JSON" };
  }
  if (!isObj(o)) return { kind: "bad", why: "not a JSON object" };
  const { type, in_reply_to: inReplyTo } = o;
  if (typeof type !== "string") return { kind: "bad", why: `no "type"` };
  if (inReplyTo === undefined) {
    if (!(NOTICES as readonly string[]).includes(type)) return { kind: "bad", why: `a line without "in_reply_to" must be a notice (${NOTICES.join(", ")}), not type ${JSON.stringify(type)}` };
    for (const f of ["key", "owner"] as const) if (o[f] !== undefined && o[f] !== null && typeof o[f] !== "string") return { kind: "bad", why: `a notice's "${f}" must be a string` };
    return { kind: "notice", notice: { f: type as NoticeKind, ...(typeof o.key === "string" ? { key: o.key } : {}), ...(typeof o.owner === "string" ? { owner: o.owner } : {}) } };
  }
  if (!Number.isSafeInteger(inReplyTo)) return { kind: "bad", why: `"in_reply_to" must be an integer` };
  const fields = Object.fromEntries(Object.entries(o).filter(([k]) => k !== "type" && k !== "in_reply_to"));
  switch (type) {
    case "init_ok": {
      if (typeof o.fences !== "boolean") return { kind: "bad", why: `init_ok needs "fences" (true or false)` };
      if (!RENEW_MODES.includes(o.renew as RenewMode)) return { kind: "bad", why: `init_ok needs "renew" (${RENEW_MODES.join(", ")})` };
      if (o.library !== undefined && typeof o.library !== "string") return { kind: "bad", why: `init_ok's "library" must be a string` };
      const kinds = o.kinds === undefined ? undefined : readKinds(o.kinds);
      if (typeof kinds === "string") return { kind: "bad", why: `init_ok's ${kinds}` };
      return {
        kind: "reply",
        inReplyTo: inReplyTo as number,
        reply: { type, fences: o.fences, renew: o.renew as RenewMode, ...(o.library ? { library: o.library as string } : {}), ...(kinds ? { kinds } : {}) },
      };
    }
    case "ok":
      return { kind: "reply", inReplyTo: inReplyTo as number, reply: { type, fields } };
    case "fail":
    case "error":
      if (typeof o.error !== "string" || o.error === "") return { kind: "bad", why: `a ${type} reply needs "error" (a short phrase)` };
      if (type === "error") return { kind: "reply", inReplyTo: inReplyTo as number, reply: { type, error: o.error } };
      return { kind: "reply", inReplyTo: inReplyTo as number, reply: { type, error: o.error, fields: Object.fromEntries(Object.entries(fields).filter(([k]) => k !== "error")) } };
    default:
      return { kind: "bad", why: `unknown reply type ${JSON.stringify(type)} (init_ok, ok, fail or error)` };
  }
}

/**
 * The lock kinds a manifest or an init_ok declares (`"kinds"`), in the protocol's
 * words ({"reentrant": {"fence_on_reentry": "same"}, "rw": true, ...}), or what
 * is wrong with them. Absent kinds are a plain mutex that cannot cancel.
 */
export function readKinds(v: unknown): LockKinds | string {
  if (!isObj(v)) return `"kinds" must be an object, e.g. {"rw": true, "cancel": true}`;
  const kinds: LockKinds = {};
  for (const [name, value] of Object.entries(v)) {
    if (name === "reentrant") {
      const rule = isObj(value) ? value.fence_on_reentry : undefined;
      if (rule !== "same" && rule !== "new") return `"kinds"."reentrant" must be {"fence_on_reentry": "same"} or {"fence_on_reentry": "new"}`;
      kinds.reentrant = { fenceOnReentry: rule };
    } else if (name === "rw" || name === "semaphore" || name === "cancel") {
      if (typeof value !== "boolean") return `"kinds"."${name}" must be true or false`;
      if (value) kinds[name] = true;
    }
    // Unknown kinds are ignored, as unknown fields are: a later version may add some.
  }
  return kinds;
}

/** Two declarations of kinds say the same. */
export const sameKinds = (a: LockKinds, b: LockKinds): boolean =>
  a.reentrant?.fenceOnReentry === b.reentrant?.fenceOnReentry && !!a.rw === !!b.rw && !!a.semaphore === !!b.semaphore && !!a.cancel === !!b.cancel;

/** What is wrong with an acquire's ok, or null: it names a hold (owner) and its fence; a re-entry's, the owner it re-entered. */
export function acquireOkProblem(fields: Obj, fences: boolean, reentered?: string): string | null {
  if (typeof fields.owner !== "string" || fields.owner === "") return `an acquire's ok needs "owner" (a string unique to the hold)`;
  if (reentered !== undefined && fields.owner !== reentered) return `a re-entry's ok must keep the owner it re-entered (${JSON.stringify(reentered)}), not ${JSON.stringify(fields.owner)}`;
  const fence = fields.fence;
  if (fence === undefined) return `an acquire's ok needs "fence" (an integer, or null)`;
  if (fence !== null && !Number.isSafeInteger(fence)) return `"fence" must be an integer or null`;
  if (fences && fence === null) return `"fence" is null, yet the adapter says its holds carry fences ("fences": true)`;
  return null;
}

/** What is wrong with a renew's ok, or null. */
export function renewOkProblem(fields: Obj): string | null {
  const ttl = fields.ttl_ms;
  return ttl === undefined || (typeof ttl === "number" && Number.isFinite(ttl) && ttl >= 0) ? null : `a renew's "ttl_ms" must be a number >= 0`;
}

/** What is wrong with a release's ok, or null. */
export function releaseOkProblem(fields: Obj): string | null {
  if (fields.released !== undefined && typeof fields.released !== "boolean") return `a release's "released" must be true or false`;
  if (fields.lost !== undefined && typeof fields.lost !== "string") return `a release's "lost" must be a string`;
  return null;
}
