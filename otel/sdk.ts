// The OpenTelemetry SDK as fencecheck's own processes run it under `fencecheck
// test --otel`: a BasicTracerProvider whose BatchSpanProcessor sends OTLP/HTTP
// (JSON) to the run's collector, with the resource attributes a trace check
// makes its processes of (service.instance.id, host.name). The SDK packages are
// optional dependencies, loaded here only, so a run without --otel loads none.
import { hostname } from "node:os";
import type { Tracer } from "@opentelemetry/api";

export interface SdkTracing {
  tracer: Tracer;
  /** Exports every span ended so far and shuts the provider down; never rejects (a collector gone is spans lost, which the trace check counts). */
  finish(): Promise<void>;
}

/**
 * Sends often and holds many: a run's spans reach the collector within half a
 * second (the default waits 5 s), and a burst of holds (a thousand clients) is
 * not dropped for a full queue (the default holds 2,048 spans).
 */
const BATCH = { scheduledDelayMillis: 500, maxQueueSize: 1 << 16, maxExportBatchSize: 1024, exportTimeoutMillis: 10_000 };

/** A tracer of a provider of its own (not the global one), exporting to `collectorUrl`/v1/traces. */
export async function startSdkTracing(o: { collectorUrl: string; serviceName: string; instance: string }): Promise<SdkTracing> {
  let mods;
  try {
    mods = await Promise.all([import("@opentelemetry/sdk-trace-base"), import("@opentelemetry/resources"), import("@opentelemetry/exporter-trace-otlp-http")]);
  } catch (err) {
    // A run checks for them before anything starts (setup/extras.ts, OTEL_SDK); this is the last word.
    throw new Error(`--otel needs the OpenTelemetry SDK, optional dependencies of fencecheck: run npm install without --omit=optional (${(err as Error).message})`);
  }
  const [{ BasicTracerProvider, BatchSpanProcessor }, { resourceFromAttributes }, { OTLPTraceExporter }] = mods;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": o.serviceName, "service.instance.id": o.instance, "host.name": hostname() }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${o.collectorUrl}/v1/traces` }), BATCH)],
  });
  return {
    tracer: provider.getTracer("fencecheck"),
    async finish() {
      await provider.forceFlush().catch((err: Error) => process.stderr.write(`otel: could not export every span: ${err.message}\n`));
      await provider.shutdown().catch(() => {});
    },
  };
}

/** What a write's and a decision's lock.data says: the data itself when it is a string, else its JSON, the same on both sides so that they match. */
export const spanData = (data: unknown): string => (typeof data === "string" ? data : JSON.stringify(data ?? null));
