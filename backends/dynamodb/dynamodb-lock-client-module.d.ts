// Types for dynamodb-lock-client 0.7.3 (it ships none): only what
// backends/dynamodb/dynamodb-lock-client.ts uses, as its index.js and README define it.
declare module "dynamodb-lock-client" {
  import type { EventEmitter } from "node:events";
  import type { DocumentClient } from "aws-sdk/clients/dynamodb.js";

  interface FailOpenConfig {
    dynamodb: DocumentClient;
    lockTable: string;
    partitionKey: string;
    sortKey?: string;
    /** Heartbeats every this many ms while held; absent: none. */
    heartbeatPeriodMs?: number;
    leaseDurationMs: number;
    owner?: string;
    /** Attempts after the first, each after a wait of the lease it found (default 1). */
    retryCount?: number;
    trustLocalTime?: boolean;
  }

  /** A held lock: emits "error" when a heartbeat fails, and heartbeats no more after it. */
  interface Lock extends EventEmitter {
    /** Rises by one per fail-open acquisition of the key. */
    fencingToken: number;
    release(callback: (error?: Error) => void): void;
    /** Internal: the pending heartbeat's timer, and whether release() was called (it then sends no more). */
    heartbeatTimeout?: NodeJS.Timeout;
    _released: boolean;
  }

  class FailOpen {
    constructor(config: FailOpenConfig);
    acquireLock(id: string, callback: (error: (Error & { code?: string }) | undefined, lock: Lock) => void): void;
  }
}
