// Workloads by name: what the logical clients do.
import { fencedWrite } from "./fenced-write.ts";
import { counter } from "./counter.ts";
import type { Workload } from "./workload.ts";

export type { Workload, ClientEnv } from "./workload.ts";
export type { WorkloadOptions, LockSpec } from "./options.ts";
export { MUTEX } from "./options.ts";
export { keyName } from "./options.ts";
export { LogicalClient, type Completion } from "./client.ts";
export { Arrivals } from "./arrivals.ts";
export type { OperationMetrics, MetricsSnapshot } from "./metrics.ts";
/** The metrics of the operations, loaded by the runs that keep metrics only: they load prom-client, which every worker's start would pay for otherwise. */
export const loadOperationMetrics = async (): Promise<typeof import("./metrics.ts").OperationMetrics> => (await import("./metrics.ts")).OperationMetrics;

export const WORKLOADS = {
  "fenced-write": fencedWrite,
  counter,
} as const satisfies Record<string, Workload>;
