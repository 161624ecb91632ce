// Spans from OTLP JSON as the OpenTelemetry Collector's file exporter writes it:
// one JSON object a line, each {"resourceSpans":[...]} (an ExportTraceServiceRequest).
// OTLP's JSON mapping writes trace and span ids as hex, enums as integers, and
// 64-bit integers (the times, int attributes) as decimal strings, though some
// writers give numbers: both are read. The protobuf and zstd forms of the
// exporter are refused by name, not misread as broken JSON.
import { BadInput } from "../lib/exit.ts";

/** An attribute's value as the conventions use them (docs/traces.md); arrays and maps are kept as JSON text. */
export type AttributeValue = string | number | boolean;

export interface Span {
  traceId: string;
  spanId: string;
  name: string;
  /** Unix nanoseconds. */
  start: bigint;
  end: bigint;
  attributes: Record<string, AttributeValue>;
  /** The resource's attributes (service.instance.id, host.name, ...). */
  resource: Record<string, AttributeValue>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: 0 | 1 | 2;
  /** Where it was read: "FILE:LINE". */
  where: string;
}

const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

/** Every span of a file's lines, in the file's order; BadInput naming the line of anything that is not OTLP JSON. */
export function readOtlpJson(bytes: Buffer, file: string): Span[] {
  if (ZSTD_MAGIC.every((b, i) => bytes[i] === b))
    throw new BadInput(`${file}: zstd-compressed (the file exporter's "compression: zstd"); decompress it first (zstd -d) or export with compression off: fencecheck traces reads OTLP JSON lines`);
  const text = bytes.toString("utf8");
  // The file exporter's protobuf form is length-prefixed binary: it holds bytes UTF-8 cannot carry, or NULs.
  if (text.includes("\uFFFD") || text.includes("\u0000"))
    throw new BadInput(`${file}: not text; the file exporter's "format: proto" writes protobuf, and fencecheck traces reads its "format: json" (OTLP JSON, one object a line)`);
  const spans: Span[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "") continue;
    const where = `${file}:${i + 1}`;
    let doc: unknown;
    try {
      doc = JSON.parse(line);
    } catch (err) {
      throw new BadInput(`${where}: not JSON (${(err as Error).message}); each line must be one OTLP JSON object {"resourceSpans":[...]}`);
    }
    for (const span of requestSpans(doc, where).spans) spans.push(span);
  }
  return spans;
}

/** The spans of one request, and the request as it would be spooled: `accepted` holds only the spans that were read. */
export interface RequestSpans {
  spans: Span[];
  /** Spans refused one by one (only with `check`): how many, and the first one's problem. */
  rejected: number;
  firstProblem: string | undefined;
  /** The request with the rejected spans left out, in OTLP JSON. */
  accepted: { resourceSpans: unknown[] };
}

/**
 * One ExportTraceServiceRequest in OTLP JSON as spans: the one conversion a file's
 * line and a request over HTTP (traces/live, protobuf turned into this JSON shape
 * first) both go through. Without `check`, anything wrong is BadInput naming
 * `where`; with it, a span that is malformed or that `check` throws BadInput for is
 * left out and counted, as OTLP's partial success asks a receiver to do, and only
 * a request whose shape is broken is BadInput.
 */
export function requestSpans(doc: unknown, where: string, check?: (span: Span) => void): RequestSpans {
  const out: RequestSpans = { spans: [], rejected: 0, firstProblem: undefined, accepted: { resourceSpans: [] } };
  const resourceSpans = field(doc, "resourceSpans", where, "an object with resourceSpans");
  for (const [r, rs] of list(resourceSpans, `${where}: resourceSpans`).entries()) {
    const at = `${where}: resourceSpans[${r}]`;
    const resource = attributes((rs as { resource?: { attributes?: unknown } })?.resource?.attributes, `${at}.resource`);
    const scopeSpans = (rs as { scopeSpans?: unknown }).scopeSpans ?? [];
    const keptScopes: unknown[] = [];
    for (const [s, ss] of list(scopeSpans, `${at}.scopeSpans`).entries()) {
      const kept: unknown[] = [];
      for (const [k, raw] of list((ss as { spans?: unknown })?.spans ?? [], `${at}.scopeSpans[${s}].spans`).entries()) {
        const spanAt = `${at}.scopeSpans[${s}].spans[${k}]`;
        if (!check) {
          out.spans.push(readSpan(raw, resource, spanAt, where));
          continue;
        }
        try {
          const span = readSpan(raw, resource, spanAt, where);
          check(span);
          out.spans.push(span);
          kept.push(raw);
        } catch (err) {
          if (!(err instanceof BadInput)) throw err;
          out.rejected++;
          out.firstProblem ??= err.message;
        }
      }
      if (kept.length) keptScopes.push({ ...(ss as object), spans: kept });
    }
    if (keptScopes.length) out.accepted.resourceSpans.push({ ...(rs as object), scopeSpans: keptScopes });
  }
  return out;
}

function readSpan(span: unknown, resource: Record<string, AttributeValue>, at: string, where: string): Span {
  if (typeof span !== "object" || span === null) throw new BadInput(`${at}: not an object`);
  const s = span as Record<string, unknown>;
  const traceId = hexId(s.traceId, 32, `${at}.traceId`);
  const spanId = hexId(s.spanId, 16, `${at}.spanId`);
  if (typeof s.name !== "string" || s.name === "") throw new BadInput(`${at}: no name`);
  const start = nanos(s.startTimeUnixNano, `${at}.startTimeUnixNano`);
  const end = nanos(s.endTimeUnixNano, `${at}.endTimeUnixNano`);
  if (end < start) throw new BadInput(`${at} (span ${spanId}, ${s.name}): ends before it starts`);
  const code = (s.status as { code?: unknown } | undefined)?.code ?? 0;
  const status = typeof code === "string" ? { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 }[code] : code;
  if (status !== 0 && status !== 1 && status !== 2) throw new BadInput(`${at}.status.code: ${JSON.stringify(code)} is not 0, 1 or 2`);
  return { traceId, spanId, name: s.name, start, end, attributes: attributes(s.attributes, at), resource, status, where };
}

function field(doc: unknown, name: string, where: string, what: string): unknown {
  if (typeof doc !== "object" || doc === null || !(name in doc)) throw new BadInput(`${where}: not ${what}`);
  return (doc as Record<string, unknown>)[name];
}

function list(value: unknown, at: string): unknown[] {
  if (!Array.isArray(value)) throw new BadInput(`${at}: not a list`);
  return value;
}

function hexId(value: unknown, digits: number, at: string): string {
  if (typeof value !== "string" || !new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(value))
    throw new BadInput(`${at}: ${JSON.stringify(value)} is not ${digits} hex digits (OTLP JSON writes ids as hex, not base64)`);
  return value.toLowerCase();
}

function nanos(value: unknown, at: string): bigint {
  if (typeof value === "string" && /^\d+$/.test(value)) return BigInt(value);
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  throw new BadInput(`${at}: ${JSON.stringify(value)} is not a time in Unix nanoseconds (a decimal string or a whole number)`);
}

/** OTLP's KeyValue list as a plain object. */
function attributes(value: unknown, at: string): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  if (value === undefined) return out;
  for (const [i, kv] of list(value, `${at}.attributes`).entries()) {
    const { key, value: v } = (kv ?? {}) as { key?: unknown; value?: Record<string, unknown> };
    if (typeof key !== "string") throw new BadInput(`${at}.attributes[${i}]: no key`);
    out[key] = anyValue(v, `${at}.attributes[${i}] (${key})`);
  }
  return out;
}

function anyValue(v: Record<string, unknown> | undefined, at: string): AttributeValue {
  if (v === undefined || v === null || typeof v !== "object") throw new BadInput(`${at}: no value`);
  if ("stringValue" in v && typeof v.stringValue === "string") return v.stringValue;
  if ("boolValue" in v && typeof v.boolValue === "boolean") return v.boolValue;
  if ("intValue" in v) {
    const n = typeof v.intValue === "string" && /^-?\d+$/.test(v.intValue) ? Number(v.intValue) : v.intValue;
    if (typeof n !== "number" || !Number.isSafeInteger(n)) throw new BadInput(`${at}: intValue ${JSON.stringify(v.intValue)} is not an integer`);
    return n;
  }
  if ("doubleValue" in v && typeof v.doubleValue === "number") return v.doubleValue;
  if ("arrayValue" in v || "kvlistValue" in v || "bytesValue" in v) return JSON.stringify(v);
  throw new BadInput(`${at}: ${JSON.stringify(v)} is not an OTLP AnyValue`);
}
