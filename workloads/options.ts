import type { LockKind } from "../clients/lock.ts";
// What every lock workload is parameterised by; set from the CLI.
export interface WorkloadOptions {
  /** Lease TTL asked for at acquire, in ms. */
  ttlMs: number;
  /** Give up an acquire after this long without the lock (fail "timeout"). */
  acquireTimeoutMs: number;
  /** Simulated work while holding, before the writes. */
  workMs: number;
  /** In-process pause (a simulated GC pause), 0 for none. */
  pauseMs: number;
  /**
   * Where the pause is taken: just after acquiring, (workloads that read) between
   * the read and the write, or inside the lock client's acquire, between the node
   * replies and its decision (the project's Redlock: K5; the client takes it, not the workload),
   * after each re-entry of a reentrant hold is granted (before that depth's work and
   * write), or just before the hold's release (a reentrant hold's: after its inner releases).
   */
  pauseAt: "acquire" | "read" | "replies" | "reenter" | "release";
  /** Which clients take that pause: their ids, or every client. */
  pauseClients: number[] | "all";
  writesPerHold: number;
  /** Clients spread over this many keys (1: one hot key). */
  keys: number;
  /** Acquire attempts per second per client, on an open (Poisson) schedule. */
  rate: number;
  /** Client i starts i * stagger ms after the run starts. */
  staggerMs: number;
  /** Keep the lease alive with a renew every ttl/3 while holding. */
  renew: boolean;
  /** Reads carry the hold's fence, and the resource advances the key's fence on them (closes C1). */
  fenceReads: boolean;
  /** Every key's name starts with this (--key-prefix; a run's own on a shared cluster). */
  keyPrefix?: string;
  /** The kind of lock the holds take (--lock), mutex unless asked. */
  lock: LockSpec;
  /** The share of waiting acquires withdrawn before their timeout (--cancel-rate). */
  cancelRate: number;
}

/** What kind of lock, and its parameters (format 2 lock kinds). */
export interface LockSpec {
  kind: LockKind;
  /** A semaphore's permits (1 for the others). */
  permits: number;
  /** rw: the share of acquires that read. */
  readRatio: number;
  /** reentrant: the deepest re-entry. */
  maxDepth: number;
}

export const MUTEX: LockSpec = { kind: "mutex", permits: 1, readRatio: 0, maxDepth: 1 };

export const keyName = (i: number): string => `k${i}`;
