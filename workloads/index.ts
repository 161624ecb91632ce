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
export { OperationMetrics, type MetricsSnapshot } from "./metrics.ts";

export const WORKLOADS: Record<string, Workload> = {
  [fencedWrite.name]: fencedWrite,
  [counter.name]: counter,
};
