// OTLP/HTTP's protobuf body: ExportTraceServiceRequest in, ExportTraceServiceResponse
// and google.rpc.Status out. The messages are declared here, with the field
// numbers of opentelemetry-proto (trace/v1/trace.proto, common/v1/common.proto,
// resource/v1/resource.proto, collector/trace/v1/trace_service.proto), and only
// the fields the conventions read: a field we do not declare is skipped by the
// decoder as protobuf skips any unknown field, so a newer sender is still read.
// A request is turned into OTLP JSON's shape (ids hex, 64-bit integers decimal
// strings, exactly, from protobufjs's Long) so that otlp-json.ts reads it as it
// reads a file's line, and the spool holds what the Collector's file exporter writes.
import protobuf from "protobufjs";

const repeated = (type: string, id: number) => ({ rule: "repeated", type, id });
const one = (type: string, id: number) => ({ type, id });

const OTLP = protobuf.Root.fromJSON({
  nested: {
    ExportTraceServiceRequest: { fields: { resourceSpans: repeated("ResourceSpans", 1) } },
    ResourceSpans: { fields: { resource: one("Resource", 1), scopeSpans: repeated("ScopeSpans", 2), schemaUrl: one("string", 3) } },
    Resource: { fields: { attributes: repeated("KeyValue", 1) } },
    ScopeSpans: { fields: { scope: one("InstrumentationScope", 1), spans: repeated("Span", 2), schemaUrl: one("string", 3) } },
    InstrumentationScope: { fields: { name: one("string", 1), version: one("string", 2), attributes: repeated("KeyValue", 3) } },
    Span: {
      fields: {
        traceId: one("bytes", 1),
        spanId: one("bytes", 2),
        traceState: one("string", 3),
        parentSpanId: one("bytes", 4),
        name: one("string", 5),
        // An enum on the wire is a varint: SpanKind's numbers are kept as numbers, as OTLP JSON writes them.
        kind: one("int32", 6),
        startTimeUnixNano: one("fixed64", 7),
        endTimeUnixNano: one("fixed64", 8),
        attributes: repeated("KeyValue", 9),
        status: one("SpanStatus", 15),
      },
    },
    SpanStatus: { fields: { message: one("string", 2), code: one("int32", 3) } },
    KeyValue: { fields: { key: one("string", 1), value: one("AnyValue", 2) } },
    AnyValue: {
      oneofs: { value: { oneof: ["stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue"] } },
      fields: {
        stringValue: one("string", 1),
        boolValue: one("bool", 2),
        intValue: one("int64", 3),
        doubleValue: one("double", 4),
        arrayValue: one("ArrayValue", 5),
        kvlistValue: one("KeyValueList", 6),
        bytesValue: one("bytes", 7),
      },
    },
    ArrayValue: { fields: { values: repeated("AnyValue", 1) } },
    KeyValueList: { fields: { values: repeated("KeyValue", 1) } },
    ExportTraceServiceResponse: { fields: { partialSuccess: one("ExportTracePartialSuccess", 1) } },
    ExportTracePartialSuccess: { fields: { rejectedSpans: one("int64", 1), errorMessage: one("string", 2) } },
    // google.rpc.Status, OTLP/HTTP's body for a refused request.
    RpcStatus: { fields: { code: one("int32", 1), message: one("string", 2) } },
  },
});

const Request = OTLP.lookupType("ExportTraceServiceRequest");
const Response = OTLP.lookupType("ExportTraceServiceResponse");
const RpcStatus = OTLP.lookupType("RpcStatus");

type Msg = Record<string, unknown>;

/** A protobuf ExportTraceServiceRequest in OTLP JSON's shape; throws (protobufjs's error) on bytes that are not one. */
export function decodeTraceRequest(body: Uint8Array): { resourceSpans: unknown[] } {
  const req = Request.decode(body) as unknown as Msg;
  return { resourceSpans: ((req.resourceSpans as Msg[]) ?? []).map(resourceSpans) };
}

/** The answer to a request, empty when nothing was rejected (OTLP: partial_success is then left unset). */
export function encodeTraceResponse(rejected: number, message: string | undefined): Uint8Array {
  const partialSuccess = rejected > 0 ? { rejectedSpans: rejected, errorMessage: message ?? "" } : undefined;
  return Response.encode(Response.create(partialSuccess ? { partialSuccess } : {})).finish();
}

/** google.rpc.Status: 3 is INVALID_ARGUMENT. */
export function encodeRpcStatus(code: number, message: string): Uint8Array {
  return RpcStatus.encode(RpcStatus.create({ code, message })).finish();
}

function resourceSpans(rs: Msg): Msg {
  const resource = rs.resource as Msg | undefined;
  return {
    resource: { attributes: keyValues(resource?.attributes) },
    scopeSpans: ((rs.scopeSpans as Msg[]) ?? []).map((ss) => {
      const scope = ss.scope as Msg | undefined;
      return {
        scope: { name: scope?.name ?? "", ...(scope?.version ? { version: scope.version } : {}) },
        spans: ((ss.spans as Msg[]) ?? []).map(span),
      };
    }),
  };
}

function span(s: Msg): Msg {
  const status = s.status as Msg | undefined;
  return {
    traceId: hex(s.traceId),
    spanId: hex(s.spanId),
    ...(has(s, "parentSpanId") && (s.parentSpanId as Uint8Array).length ? { parentSpanId: hex(s.parentSpanId) } : {}),
    name: s.name ?? "",
    kind: s.kind ?? 0,
    startTimeUnixNano: decimal(s.startTimeUnixNano),
    endTimeUnixNano: decimal(s.endTimeUnixNano),
    attributes: keyValues(s.attributes),
    status: status ? { ...(status.message ? { message: status.message } : {}), ...(status.code ? { code: status.code } : {}) } : {},
  };
}

function keyValues(list: unknown): Msg[] {
  return ((list as Msg[] | undefined) ?? []).map((kv) => ({ key: kv.key ?? "", value: anyValue(kv.value as Msg | undefined) }));
}

function anyValue(v: Msg | undefined): Msg {
  if (v === undefined || v === null) return {};
  if (has(v, "stringValue")) return { stringValue: v.stringValue };
  if (has(v, "boolValue")) return { boolValue: v.boolValue };
  if (has(v, "intValue")) return { intValue: decimal(v.intValue) };
  if (has(v, "doubleValue")) return { doubleValue: v.doubleValue };
  if (has(v, "arrayValue")) return { arrayValue: { values: (((v.arrayValue as Msg).values as Msg[]) ?? []).map(anyValue) } };
  if (has(v, "kvlistValue")) return { kvlistValue: { values: keyValues((v.kvlistValue as Msg).values) } };
  if (has(v, "bytesValue")) return { bytesValue: Buffer.from(v.bytesValue as Uint8Array).toString("base64") };
  return {};
}

// protobufjs decodes a field that was on the wire as an own property; absent ones come from the prototype's defaults.
const has = (m: Msg, name: string) => Object.prototype.hasOwnProperty.call(m, name);

const hex = (b: unknown) => (b instanceof Uint8Array ? Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex") : "");

/** A 64-bit integer as decimal text, exactly: a Long (unsigned for fixed64) or a number below 2^53. */
function decimal(n: unknown): string {
  if (n === undefined || n === null) return "0";
  return typeof n === "number" ? String(n) : String(n as { toString(): string });
}
