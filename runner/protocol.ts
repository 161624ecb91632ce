// Messages between the runner and its worker processes (over Node's IPC channel).
import type { UnindexedEvent } from "../store/events.ts";
import type { ProtocolError } from "../store/protocol-errors.ts";
import type { Endpoint, ClientOptions, ServiceAccess } from "../clients/index.ts";
import type { WorkloadOptions, MetricsSnapshot } from "../workloads/index.ts";

export interface WorkerConfig {
  worker: string;
  /** Logical client ids this worker runs. */
  clients: number[];
  concurrency: number;
  seed: number;
  /** The run's t0 (hrtime ns) as a decimal string. */
  t0: string;
  /** Per client id: the lock service's nodes as that client reaches them. */
  endpoints: Record<number, Endpoint[]>;
  /** What the clients need of a service of the user's beyond addresses (DynamoDB's account): here only, never in run.json or a log. */
  service?: ServiceAccess;
  client: string;
  clientOptions: ClientOptions;
  /** The backend's name, for clients that pass it on (an adapter program's init). */
  backend: string;
  workload: string;
  opts: WorkloadOptions;
  resourceUrl: string;
  commandTimeoutMs: number;
  /** With --metrics-port: the labels every series of this worker carries besides `worker`. Absent: no metrics kept. */
  metrics?: { backend: string; client: string };
  /** With --otel: the run's collector (its OTLP/HTTP receiver), where the worker's lock and write spans go. Absent: no spans. */
  otel?: { url: string };
}

export type ToWorker =
  /** Load the lock client's code now, while the servers start, so that setup only makes the clients. */
  | { type: "load"; client: string; backend: string }
  | { type: "setup"; config: WorkerConfig }
  /** Start the clients now; stop starting holds after `endAt` (run-clock ns). */
  | { type: "go"; startAt: number; endAt: number }
  /** Stop starting new holds at once (Ctrl-C, or the run is being torn down). */
  | { type: "stop" };

export type FromWorker =
  | { type: "ready" }
  | { type: "events"; events: UnindexedEvent[] }
  /** The worker's metrics as they stand (prom-client's JSON form), for the runner's /metrics. */
  | { type: "metrics"; metrics: MetricsSnapshot }
  /** Its clients are done; how long its event loop was held up meanwhile (ms), so a run can tell a slow lock from a busy harness. */
  | { type: "done"; eventLoopDelayMs?: EventLoopDelay }
  | { type: "error"; message: string }
  /** Something the person running the test must hear of (an adapter program that broke the protocol), for the console. */
  | { type: "warning"; message: string }
  /** An adapter program broke the protocol: a line of protocol-errors.ndjson, whether or not an operation of the history ended with it. */
  | { type: "protocol-error"; error: ProtocolError };

export interface EventLoopDelay {
  p50: number;
  p99: number;
  max: number;
}
