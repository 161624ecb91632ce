// What a toxic is, as the API sees it: its type, its attributes with their
// defaults, and how a request body becomes one. What a toxic does to bytes lives
// in stages.ts; block_from, which acts on whole connections, in connection.ts.
//
// Parsing follows Toxiproxy's order and wording: a bad stream is reported before a
// bad type, a missing name becomes `<type>_<stream>`, attributes not given keep
// their zero value (Go's), and unknown attribute keys are ignored.
import { badBody, invalidStream, invalidToxicType } from "./api-error.ts";

export type Stream = "upstream" | "downstream";

export interface LatencyAttributes { latency: number; jitter: number }
export interface BandwidthAttributes { rate: number }
export interface SlowCloseAttributes { delay: number }
export interface TimeoutAttributes { timeout: number }
export interface ResetPeerAttributes { timeout: number }
export interface SlicerAttributes { average_size: number; size_variation: number; delay: number }
export interface LimitDataAttributes { bytes: number }
/** Ours, not Toxiproxy's: the cluster member ids (X-Server-From values) to refuse. */
export interface BlockFromAttributes { from: string[] }
/** Ours: rewrites a ZooKeeper election connection's first message (no attributes). */
export type ZkSidOnlyAttributes = Record<string, never>;

export type ToxicKind =
  | { type: "latency"; attributes: LatencyAttributes }
  | { type: "bandwidth"; attributes: BandwidthAttributes }
  | { type: "slow_close"; attributes: SlowCloseAttributes }
  | { type: "timeout"; attributes: TimeoutAttributes }
  | { type: "reset_peer"; attributes: ResetPeerAttributes }
  | { type: "slicer"; attributes: SlicerAttributes }
  | { type: "limit_data"; attributes: LimitDataAttributes }
  | { type: "block_from"; attributes: BlockFromAttributes }
  | { type: "zk_sid_only"; attributes: ZkSidOnlyAttributes };

export type ToxicType = ToxicKind["type"];

export type Toxic = ToxicKind & {
  name: string;
  stream: Stream;
  /** Chance, per connection, that the toxic acts on it (Toxiproxy's float32 in 0..1). */
  toxicity: number;
};

/** The JSON Toxiproxy answers with, keys in its order. */
export interface ToxicJson {
  attributes: Record<string, number | string[]>;
  name: string;
  type: ToxicType;
  stream: Stream;
  toxicity: number;
}

type FieldKind = "number" | "strings";

// Every attribute a type has, so defaults can be filled in and shown the way Go
// marshals a struct: all fields, zero when not set.
const FIELDS: { [T in ToxicType]: Record<string, FieldKind> } = {
  latency: { latency: "number", jitter: "number" },
  bandwidth: { rate: "number" },
  slow_close: { delay: "number" },
  timeout: { timeout: "number" },
  reset_peer: { timeout: "number" },
  slicer: { average_size: "number", size_variation: "number", delay: "number" },
  limit_data: { bytes: "number" },
  block_from: { from: "strings" },
  zk_sid_only: {},
};

/** Every type this proxy knows, Toxiproxy's and ours. */
export const TOXIC_TYPES = Object.keys(FIELDS) as ToxicType[];

/** Ours alone: a real Toxiproxy answers 400 "invalid toxic type" to it. */
export const OWN_TOXIC_TYPES: ReadonlySet<ToxicType> = new Set(["block_from", "zk_sid_only"]);

/** What a real Toxiproxy knows (2.x): the rest. The conformance suite holds both servers to it. */
export const TOXIPROXY_TOXICS: readonly ToxicType[] = TOXIC_TYPES.filter((t) => !OWN_TOXIC_TYPES.has(t));

export function isToxicType(type: unknown): type is ToxicType {
  return typeof type === "string" && Object.hasOwn(FIELDS, type);
}

/** block_from decides about whole connections instead of transforming bytes. */
export function actsOnConnections(toxic: Toxic): toxic is Toxic & { type: "block_from" } {
  return toxic.type === "block_from";
}

export function toxicJson(toxic: Toxic): ToxicJson {
  const attributes: Record<string, number | string[]> = {};
  for (const [key, value] of Object.entries(toxic.attributes)) {
    attributes[key] = Array.isArray(value) ? [...value] : (value as number);
  }
  return { attributes, name: toxic.name, type: toxic.type, stream: toxic.stream, toxicity: toxic.toxicity };
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function optionalString(body: Record<string, unknown>, key: string): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw badBody(`${key} must be a string`);
  return v;
}

function parseToxicity(body: Record<string, unknown>, fallback: number): number {
  const v = body.toxicity;
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "number" || !Number.isFinite(v)) throw badBody("toxicity must be a number");
  return v;
}

/** Merge `raw` (the request's attributes) over `base`; Go's json.Decode into a struct does the same. */
function parseAttributes(type: ToxicType, raw: unknown, base: Record<string, number | string[]> | undefined): Record<string, number | string[]> {
  const fields = FIELDS[type];
  const out: Record<string, number | string[]> = {};
  for (const [key, kind] of Object.entries(fields)) {
    const prior = base?.[key];
    out[key] = prior !== undefined ? prior : kind === "number" ? 0 : [];
  }
  if (raw === undefined || raw === null) return out;
  if (!isObject(raw)) throw badBody("attributes must be an object");
  for (const [key, kind] of Object.entries(fields)) {
    const v = raw[key];
    if (v === undefined || v === null) continue;
    if (kind === "number") {
      if (typeof v !== "number" || !Number.isFinite(v)) throw badBody(`attribute ${key} must be a number`);
      out[key] = v;
    } else {
      if (!Array.isArray(v) || !v.every((s) => typeof s === "string")) throw badBody(`attribute ${key} must be an array of strings`);
      out[key] = [...(v as string[])];
    }
  }
  return out;
}

function assemble(type: ToxicType, name: string, stream: Stream, toxicity: number, attributes: Record<string, number | string[]>): Toxic {
  // The field table above is what makes this cast true: `attributes` has exactly
  // the keys, with the kinds, of the type's attribute interface.
  return { type, name, stream, toxicity, attributes } as unknown as Toxic;
}

/** A POST /proxies/{p}/toxics body. Name clashes are the caller's to check. */
export function parseNewToxic(body: unknown): Toxic {
  if (!isObject(body)) throw badBody("expected a JSON object");
  const streamRaw = optionalString(body, "stream");
  let stream: Stream = "downstream";
  if (streamRaw !== undefined) {
    // Go's ParseDirection lower-cases first; so do we.
    const s = streamRaw.toLowerCase();
    if (s !== "upstream" && s !== "downstream") throw invalidStream();
    stream = s;
  }
  const type = optionalString(body, "type");
  const name = optionalString(body, "name") || `${type ?? ""}_${stream}`;
  if (!isToxicType(type)) throw invalidToxicType();
  const toxicity = parseToxicity(body, 1);
  return assemble(type, name, stream, toxicity, parseAttributes(type, body.attributes, undefined));
}

/**
 * A POST/PATCH /proxies/{p}/toxics/{t} body. As in Toxiproxy only attributes and
 * toxicity change; name, type and stream in the body are ignored.
 */
export function parseToxicUpdate(existing: Toxic, body: unknown): Toxic {
  if (!isObject(body)) throw badBody("expected a JSON object");
  const toxicity = parseToxicity(body, existing.toxicity);
  const attributes = parseAttributes(existing.type, body.attributes, existing.attributes as unknown as Record<string, number | string[]>);
  return assemble(existing.type, existing.name, existing.stream, toxicity, attributes);
}
