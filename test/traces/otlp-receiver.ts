// A tiny OTLP/HTTP receiver for the example tests (test code only): the Python
// and Java SDKs export protobuf ExportTraceServiceRequests to /v1/traces, and
// each request is written as one line of OTLP JSON, as the Collector's file
// exporter writes it, for `fencecheck traces` to read. The decoding is the live
// check's own (traces/otlp-proto.ts): one set of OTLP messages in the project.
import { appendFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { gunzipSync } from "node:zlib";
import { decodeTraceRequest } from "../../traces/otlp-proto.ts";

/** One request as an OTLP JSON line (hex ids, 64-bit integers as decimal strings). */
const requestJson = (body: Buffer): string => JSON.stringify(decodeTraceRequest(body));

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
