// Starting resource/main.ts as a child process and stopping it again.
import { resolve } from "node:path";
import { entryFile, spawnService, type ServiceHandle } from "../lib/index.ts";
import { T0_ENV } from "../store/clock.ts";

export interface ResourceOptions {
  /** resource.ndjson; appended to. */
  logPath: string;
  /** Refuse stale fencing tokens (otherwise accept everything and only record). */
  fencing: boolean;
  /** Reads that carry a fence advance the key's fence (closes lost updates, C1). */
  fenceReads?: boolean;
  /** The lock kind's rule: "mutex" (absent), "rw", or "semaphore:N". */
  rule?: string;
  /** The run's start on the monotonic clock (newRunStart()). */
  t0: bigint;
  /** Where the process's own output goes (appended); kept in memory if absent. */
  logFile?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** How long to wait for the process to listen. */
  startTimeoutMs?: number;
  /** Keep the state in a store a backend offers (ResourceStore), which decides each write: its decider's entry point and what it is given (absent: the process's memory). */
  store?: { entry: string; config: Record<string, unknown> };
  /** --otel: a collector's OTLP/HTTP receiver (http://127.0.0.1:PORT) for a lock.decision span of each decision. */
  otel?: string;
}

export type ResourceHandle = ServiceHandle;

export function startResource(opts: ResourceOptions): Promise<ResourceHandle> {
  const args = ["--log", resolve(opts.logPath), "--fence", opts.fencing ? "on" : "off", "--port", String(opts.port ?? 0)];
  if (opts.fenceReads) args.push("--fence-reads");
  if (opts.rule && opts.rule !== "mutex") args.push("--rule", opts.rule);
  if (opts.store) args.push("--store", opts.store.entry, "--store-config", JSON.stringify(opts.store.config));
  if (opts.otel) args.push("--otel", opts.otel);
  return spawnService({
    name: "resource",
    main: entryFile("resource/main"),
    args,
    env: { ...process.env, [T0_ENV]: opts.t0.toString() },
    logFile: opts.logFile,
    readyTimeoutMs: opts.startTimeoutMs ?? 15_000,
    stopGraceMs: 2_000,
  });
}
