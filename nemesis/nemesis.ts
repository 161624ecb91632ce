// What a nemesis is: something that injects one fault when the schedule says so,
// ends its own faults, and can heal everything at the end of a run (Jepsen's
// final generator). Every start and end goes into the history as an event.
import type { Rng } from "../lib/index.ts";
import type { ProcessGroup } from "../cluster/processes.ts";
import type { Links } from "../cluster/links.ts";
import type { Cluster } from "../cluster/cluster.ts";
import type { ClusterAbility } from "../cluster/cluster.ts";

/** Where faults land: at the current holds (the default), or anywhere. */
export type Aim = "holder" | "random";

/**
 * A lock held right now, by the history so far: the worker its client runs in,
 * and the servers that granted it where the client says (a Redlock acquire names
 * the nodes whose SET NX answered OK); null where one service granted it as a
 * whole (a single Redis, an etcd cluster).
 */
export interface HeldLock {
  worker: string;
  granted: string[] | null;
  /**
   * Its write is still to come (a write hold with no write invoked since the
   * acquire's ok; never a read hold, which writes nothing). A fault
   * that lands on such a hold delays the write itself past the lease; one that
   * lands after the write only delays the release, and a workload of one write
   * a hold then has no stale write to show. Absent: not known (as if due).
   */
  writeDue?: boolean;
}

/** How the clock nemesis moves a node's clock: one jump, or back and forth. */
export type ClockMode = "bump" | "strobe";

/**
 * Whose wall clocks the clock nemesis moves: the lock servers', or the client
 * worker processes' (a lease judged by the client's clock: DynamoDB's
 * `leaseUntil < :now`, node-redlock's validity).
 */
export type ClockTarget = "servers" | "clients";

export interface NemesisOptions {
  intervalS: number;
  /**
   * The lease the clients hold (the workload's TTL). A fault that cannot last
   * this long before the final heal makes no stale holder: it is not started
   * (see NemesisContext.remainingMs).
   */
  leaseMs: number;
  pauseMinMs: number;
  pauseMaxMs: number;
  /** Faults land at the current holds (see nemesis/aim.ts), or anywhere. */
  aim: Aim;
  /** How long a partition or a latency fault lasts: a random time in this range. */
  faultMinMs: number;
  faultMaxMs: number;
  /** Grudges a partition picks from. */
  grudges: string[];
  /** How a cut link fails (timeout, reset); network: as timeout, and etcd members cut off their container network. */
  partitionMode: "timeout" | "reset" | "network";
  latencyMs: number;
  jitterMs: number;
  /** Clock nemesis: how far a clock jumps (either way), and how a strobe flips. */
  clockOffsetMs: number;
  clockModes: readonly ClockMode[];
  strobePeriodMs: number;
  /** Whose clocks it moves; absent: the servers'. */
  clockTarget?: ClockTarget;
  /** Kill nemesis: how long a killed server stays down. */
  restartDelayMs: number;
}

export interface NemesisContext {
  rng: Rng;
  processes: ProcessGroup;
  /** Names of the worker processes ("worker-1", ...). */
  workers: string[];
  /** The locks held right now, by the history so far. */
  holds(): HeldLock[];
  /** Names of the lock service's server processes ("redis-1", ...). */
  servers: string[];
  /** The lock service, with whatever abilities its backend offers (kill, clocks, peers). */
  cluster: Cluster;
  /**
   * Move one worker's wall clock to real time + offsetMs (0 puts it back); absent
   * when the run's workers were not started under libfaketime.
   */
  skewWorkerClock?(name: string, offsetMs: number): Promise<void>;
  /** The proxied worker-to-server links (null when the run has no fault proxy). */
  links: Links | null;
  options: NemesisOptions;
  /** Record a nemesis event (process "nemesis", type "info") now. */
  record(f: string, value: Record<string, unknown>): void;
  /**
   * Whether the schedule has stopped (the time limit came) while a fault was
   * being chosen: a fault that waited for its target (a holder, a leader) past
   * the time limit must not start then. Absent: a script's, which never waits.
   */
  stopping?(): boolean;
  /**
   * ms until the final heal. Absent: a script's, whose faults come when written.
   */
  remainingMs?(): number;
  /**
   * When the last fault of the other nemeses now in force ends (Date.now() ms;
   * Infinity: at the final heal; 0: none in force). A fault aimed at holders that
   * finds none while another fault keeps the lock service away (a partition, a
   * killed server) waits that fault out rather than land at random.
   */
  othersEndAt?(self: string): number;
}

/**
 * One fault, chosen: what to do to which targets, for how long. A nemesis's
 * `inject` draws one at random; a script (nemesis/script.ts) names one. Either
 * way the nemesis performs it, records it and ends it the same way.
 */
export interface Fault {
  /** Workers or servers ("worker-1", "redis-3"), or links ("worker-1->redis-2"). */
  targets: string[];
  /** How long it lasts (a kill: how long the server stays down); null: until the final heal. */
  durationMs: number | null;
  /** Clock: how far the wall clock moves (ms, either sign), and how. */
  offsetMs?: number;
  mode?: ClockMode;
  /** Clock strobe: ms between flips. */
  periodMs?: number;
  /** Latency: ms added each way, and jitter. */
  latencyMs?: number;
  jitterMs?: number;
  /** Why it landed there (nemesis/aim.ts), recorded in its start event; a script's faults have none. */
  aim?: Record<string, unknown>;
}

export interface Nemesis {
  name: string;
  describe: string;
  /**
   * Inject one fault chosen at random now, or none when none fits (its fault still
   * in force, no target free, the time limit come while it chose); true when one
   * started. The nemesis schedules its end itself.
   */
  inject(ctx: NemesisContext): Promise<boolean>;
  /** Perform this fault now; throws when it cannot (unknown target, one already in force there). */
  perform(ctx: NemesisContext, fault: Fault): Promise<void>;
  /** End every fault still in force (called once, at the end of the run). */
  heal(ctx: NemesisContext): Promise<void>;
  /** Names of the faults in force, for the status line. */
  active(): string[];
  /** When its last fault in force ends (Date.now() ms; Infinity: at the final heal; 0: none in force). */
  endsAt?(): number;
}

/** A nemesis as the registry offers it. */
export interface NemesisKind {
  describe: string;
  /** What a fault's targets name: worker processes, lock servers, or worker-to-server links. */
  aims: "workers" | "servers" | "links";
  /** What its targets name under these options, where that depends on them (the clock nemesis: --clock-target). */
  aimsAt?(o: Pick<NemesisOptions, "clockTarget">): "workers" | "servers";
  create(): Nemesis;
  /** The cluster ability it cannot work without (when it aims at servers). */
  needs?: ClusterAbility;
  /** Its faults also cut a cluster's members apart, where they talk to each other (cluster.peers): the members then meet where a fault can reach. */
  cutsMembers?: true;
}
