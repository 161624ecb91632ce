// What a workload is: the loop one logical client runs. The runner gives it a
// client that records operations, a lock client, the resource, and its schedule.
import type { LockClient } from "../clients/lock.ts";
import type { ResourceClient } from "../clients/resource.ts";
import type { Rng } from "../lib/index.ts";
import type { LogicalClient } from "./client.ts";
import type { WorkloadOptions } from "./options.ts";

export interface ClientEnv {
  client: LogicalClient;
  lock: LockClient;
  resource: ResourceClient;
  rng: Rng;
  opts: WorkloadOptions;
  /** Waits for this client's next scheduled attempt; false once the time limit has passed. */
  nextArrival(): Promise<boolean>;
  /** The key for the next hold. */
  pickKey(): string;
}

export interface Workload {
  name: string;
  describe: string;
  /** It reads the resource, so --pause-at read and --fence-reads mean something to it. */
  reads?: boolean;
  run(env: ClientEnv): Promise<void>;
}
