// Running the built collector as a process of a process group (a run's, killed
// at its teardown or by the reaper if the runner dies; or a test's), with a
// config of our own: the OTLP receiver over HTTP on a port of ours on loopback,
// and the file exporter, the OTLP/HTTP exporter or both behind a batch processor.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { waitForMembers, type ProcessGroup } from "../cluster/processes.ts";
import { OTELCOL_SETUP, OTELCOL_VERSION, otelcolBinary, otelcolBuilt } from "./build.ts";

export interface CollectorStart {
  /** The OTLP/HTTP receiver's port on 127.0.0.1: never 4318, where a collector of the user's may listen. */
  receiverPort: number;
  /** The file exporter's file (OTLP JSON lines, what `fencecheck traces` reads). */
  fileOut?: string;
  /** An OTLP/HTTP endpoint to forward to (http://127.0.0.1:PORT): `fencecheck traces --listen`, or another collector. */
  forwardTo?: string;
  /** gzip the forwarded requests; none by default. */
  compression?: "gzip" | "none";
  /** Where its config goes (and its log, unless logFile says). */
  dir: string;
  logFile?: string;
  /** The group that owns the process. */
  group: ProcessGroup;
  /** Its name in the group; "otelcol" unless two run at once. */
  name?: string;
}

export interface RunningCollector {
  /** http://127.0.0.1:<receiverPort>, an OTLP/HTTP exporter's endpoint (traces go to <url>/v1/traces). */
  url: string;
  configFile: string;
  logFile: string;
  /** SIGTERM, and wait until it has exited: it flushes its batch and its file as it shuts down. Killed after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** How often the file exporter flushes its buffer to the file: its default is a second, and a test reading the file should not wait that long. */
const FLUSH_INTERVAL = "100ms";
/** How long the batch processor holds spans before passing them on (its default is 200 ms; said here so the wait is ours). */
const BATCH_TIMEOUT = "200ms";

/**
 * The collector's config. Written as JSON, which is YAML too, so no YAML writer
 * is needed; the collector reads it as its usual YAML.
 */
export function collectorConfig(o: Pick<CollectorStart, "receiverPort" | "fileOut" | "forwardTo" | "compression">): Record<string, unknown> {
  const exporters: Record<string, unknown> = {};
  if (o.fileOut) exporters.file = { path: resolve(o.fileOut), format: "json", flush_interval: FLUSH_INTERVAL };
  if (o.forwardTo) exporters.otlphttp = { endpoint: o.forwardTo, compression: o.compression ?? "none" };
  if (Object.keys(exporters).length === 0) throw new Error("a collector with nowhere to send spans: give fileOut, forwardTo or both");
  return {
    receivers: { otlp: { protocols: { http: { endpoint: `127.0.0.1:${o.receiverPort}` } } } },
    processors: { batch: { timeout: BATCH_TIMEOUT } },
    exporters,
    service: {
      // Its own metrics would listen on port 8888: off.
      telemetry: { metrics: { level: "none" } },
      pipelines: { traces: { receivers: ["otlp"], processors: ["batch"], exporters: Object.keys(exporters) } },
    },
  };
}

export async function startCollector(o: CollectorStart): Promise<RunningCollector> {
  if (!otelcolBuilt()) throw new Error(`the OpenTelemetry Collector v${OTELCOL_VERSION} is not built (${otelcolBinary()}): run ${OTELCOL_SETUP}`);
  const name = o.name ?? "otelcol";
  mkdirSync(o.dir, { recursive: true });
  if (o.fileOut) mkdirSync(dirname(resolve(o.fileOut)), { recursive: true });
  const configFile = join(o.dir, `${name}.yaml`);
  writeFileSync(configFile, JSON.stringify(collectorConfig(o), null, 2) + "\n");
  const logFile = o.logFile ?? join(o.dir, `${name}.log`);
  const proc = await o.group.spawn({ name, command: otelcolBinary(), args: ["--config", `file:${configFile}`], logFile });
  const url = `http://127.0.0.1:${o.receiverPort}`;
  // It says it is ready only in its log: the receiver answering is the sign. A
  // GET of /v1/traces is refused (405) without anything reaching the exporters.
  const answers = async (): Promise<boolean> => {
    try {
      await fetch(`${url}/v1/traces`, { signal: AbortSignal.timeout(1000) });
      return true;
    } catch {
      return false;
    }
  };
  try {
    await waitForMembers([name], `answering ${url}/v1/traces`, answers, { running: (n) => o.group.running(n), logFile: () => logFile, timeoutMs: 15_000, stepMs: 25 });
  } catch (err) {
    await o.group.kill(name);
    throw err;
  }
  return {
    url,
    configFile,
    logFile,
    async stop(graceMs = 10_000) {
      if (proc.alive) {
        process.kill(proc.pid, "SIGTERM");
        await Promise.race([proc.exited, new Promise((r) => setTimeout(r, graceMs).unref())]);
      }
      // Gone by now, or killed: either way no longer the group's.
      await o.group.kill(name);
    },
  };
}
