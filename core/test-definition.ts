// A test is plain data composed from parts found by name: a backend, a client, a
// workload, nemeses, and the options that parameterise them (as in Jepsen, where
// a test map merges a workload and a nemesis package).
import type { Backend, BackendOptions, ClientKind, ServerOptions } from "./backend.ts";
import type { ClientOptions, LockKinds } from "../clients/index.ts";
import type { Workload, WorkloadOptions } from "../workloads/index.ts";
import type { NemesisOptions, ScriptStep } from "../nemesis/index.ts";

export interface Test {
  /** e.g. redis-fenced-write-pause-fence-on: the folder of its runs in the store. */
  name: string;
  backend: Backend;
  /** The backend's own options (--redis-persistence, --pg-pooler: those it declares), as given or by default. */
  backendOptions: BackendOptions;
  /** A shipped client's name, or the absolute path of an adapter of the user's. */
  client: string;
  /** A shipped client's facts, as its backend declares them; absent for an adapter of the user's. */
  clientKind?: ClientKind;
  clientOptions: ClientOptions;
  /** The lock kinds the client offers (its registry entry's, or an adapter's once preflight has loaded it). */
  clientKinds?: LockKinds;
  workload: Workload;
  nemeses: string[];
  /** Chosen faults at chosen moments (a scenario); when set, it replaces the random schedule of `nemeses`. */
  script?: ScriptStep[];
  fencing: boolean;
  /** Reads that carry a fence advance the resource's fence (C1). */
  fenceReads: boolean;
  /** Where the resource keeps its state and decides: its memory (absent), or a store a backend offers, by the backend's name (--resource postgres). */
  resourceStore?: string;
  /** Whether the checker counts the strict mutex model's findings (run.json options.model; absent: lease). */
  model?: "lease" | "strict";
  /** Whether the checker's liveness findings (stuck-lock) make the run invalid (run.json options.liveness; absent: lenient). */
  liveness?: "lenient" | "strict";
  seed: number;
  timeLimitS: number;
  concurrency: number;
  workers: number;
  store: string;
  /** Keep data/ (the servers' files) once the run is over; it is no part of the run store's contract. */
  keepData?: boolean;
  portBase: number;
  /** --metrics-port: where the runner serves every process's metrics during the run (0: a free port); absent or null: nowhere. */
  metricsPort?: number | null;
  graceMs: number;
  commandTimeoutMs: number;
  /** A Toxiproxy of the user's to make the links in; null: start one for the run (toxiproxyAuto) or our own fault proxy. */
  toxiproxy: string | null;
  /** --toxiproxy auto: start Shopify's Toxiproxy, built into the cache, for the run, and use it as a user's. */
  toxiproxyAuto?: true;
  /** --otel: the workers and the resource emit spans to a Collector started for the run (otelcol/), which writes otel/spans.json; the run checks them too. */
  otel?: true;
  /** --links direct: workers reach the servers and the resource with no proxy between (no link faults then). */
  directLinks?: boolean;
  /** Where that Toxiproxy was given, for messages: "--toxiproxy" (absent) or "--endpoints FILE". */
  toxiproxyFrom?: string;
  workloadOptions: WorkloadOptions;
  nemesisOptions: NemesisOptions;
  serverOptions: ServerOptions;
  /** Start the workers under libfaketime, so the clock nemesis can move their wall clocks (--clock-target clients). */
  workerClocks?: boolean;
}
