// A tiny OTLP/HTTP receiver for the example tests (test code only): the Python
// and Java SDKs export protobuf ExportTraceServiceRequests to /v1/traces, and
// each request is written as one line of OTLP JSON, as the Collector's file
// exporter writes it (camelCase fields, hex ids, 64-bit integers as decimal
// strings), for `fencecheck traces` to read. The messages are written here from
// the OTLP protos' field numbers (opentelemetry-proto's trace/v1, common/v1,
// resource/v1, collector/trace/v1), only as far as spans need.
import { appendFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { gunzipSync } from "node:zlib";
import protobuf from "protobufjs";

const PROTO = `
syntax = "proto3";
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message Status { string message = 2; int32 code = 3; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  fixed32 flags = 16;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  uint32 dropped_events_count = 12;
  uint32 dropped_links_count = 14;
  Status status = 15;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;

const root = protobuf.parse(PROTO).root;
const Request = root.lookupType("ExportTraceServiceRequest");

const hex = (b64: unknown) => (typeof b64 === "string" ? Buffer.from(b64, "base64").toString("hex") : b64);

/** One request as OTLP JSON: protobufjs's JSON (camelCase, longs as strings) with the ids turned from base64 into hex, as OTLP JSON writes them. */
export function requestJson(body: Buffer): string {
  const doc = Request.toObject(Request.decode(body), { longs: String, bytes: String, enums: Number, oneofs: false, defaults: false }) as {
    resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }>;
  };
  for (const rs of doc.resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? []) for (const id of ["traceId", "spanId", "parentSpanId"]) if (id in s) s[id] = hex(s[id]);
  return JSON.stringify({ resourceSpans: doc.resourceSpans ?? [] });
}

export interface Receiver {
  url: string;
  requests: () => number;
  close: () => Promise<void>;
}

/** Listens on 127.0.0.1:`port` and appends each POST to /v1/traces as one JSON line to `file`. */
export async function otlpReceiver(port: number, file: string): Promise<Receiver> {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      try {
        let body = Buffer.concat(chunks);
        if (req.headers["content-encoding"] === "gzip") body = gunzipSync(body);
        if (!String(req.headers["content-type"]).startsWith("application/x-protobuf")) throw new Error(`content-type ${req.headers["content-type"]}: only OTLP/HTTP protobuf is read here`);
        appendFileSync(file, requestJson(body) + "\n");
        requests++;
        // An empty ExportTraceServiceResponse (all spans taken) is zero bytes.
        res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      } catch (err) {
        res.writeHead(400, { "content-type": "text/plain" }).end(String(err));
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
