// The shapes of a run directory's files, as docs/history-format.md (formats 1 and 2)
// defines them. This file is the one place in the code that spells the contract out; every
// writer and reader imports these types rather than restating them.

/** The format a run writes unless it uses something of format 2. */
export const FORMAT = 1 as const;
/** Format 2: what a run writes when its history may hold notices (a lock adapter program's). */
export const FORMAT_2 = 2 as const;
export const READABLE_FORMATS: readonly number[] = [FORMAT, FORMAT_2];

/** What a lock library may tell its user, as `f` of a notice line (format 2). */
export const NOTICES = ["lost", "suspended", "reconnected"] as const;
export type NoticeKind = (typeof NOTICES)[number];

/**
 * The error of an acquire that failed behind a lock node of its own session it
 * had lost track of (ZooKeeper: a create whose reply was lost, sent again). The
 * client says it; the checker's orphan-lock-node anomaly reads it.
 */
export const ORPHAN_NODE_ERROR = "orphan-node";

/** The lock kinds of format 2's header `lock` (a format 1 history is a mutex's). */
export const LOCK_KINDS = ["mutex", "reentrant", "rw", "semaphore"] as const;

/** An acquire's error when its client withdrew it and the service certainly removed the waiter; and when it cannot know. */
export const CANCELLED_ERROR = "cancelled";
export const CANCEL_UNKNOWN_ERROR = "cancel-unknown";

/**
 * The lease of an acquire or renew, in ms: the smaller of the `ttl_ms` its invoke
 * asked for and the one its ok says was granted, either alone when the other is
 * absent (NaN), NaN when both are (docs/history-format.md, mutex-violation). The
 * checker reads certain spans with it, and the workload asks for a re-entry only
 * within one, so the two agree on what the history proves.
 */
export function leaseMs(asked: number, granted: number): number {
  return Number.isNaN(granted) ? asked : Number.isNaN(asked) ? granted : Math.min(asked, granted);
}

export type OpType = "invoke" | "ok" | "fail" | "info" | "notice";
export type Process = number | "nemesis";

/** First line of history.ndjson: describes the run, is not an event. */
export interface HistoryHeader {
  format: typeof FORMAT | typeof FORMAT_2;
  kind: "header";
  run: string;
  workload: string;
  backend: string;
  fencing: boolean;
  [extra: string]: unknown;
}

/** One client operation half or nemesis event of history.ndjson. */
export interface HistoryEvent {
  index: number;
  /** Nanoseconds since the run started, on the run's shared monotonic clock. */
  time: number;
  process: Process;
  type: OpType;
  f: string;
  key?: string;
  value?: Record<string, unknown>;
  error?: string;
}

/** An event before the recorder has given it its index. */
export type UnindexedEvent = Omit<HistoryEvent, "index">;

/** One line of resource.ndjson: a decision of the protected resource. */
export interface ResourceDecision {
  seq: number;
  time: number;
  op: "write" | "read";
  key: string;
  process: number;
  owner: string;
  fence: number | null;
  max_before: number | null;
  /**
   * Format 2 (committed decisions): null when the store the resource decides in
   * was lost during the commit, so that nobody knows whether the write took effect.
   */
  accepted: boolean | null;
  data: unknown;
  fencing: boolean;
  /** Format 2, a semaphore's writes: its permits, and how many higher fences the write had seen accepted. */
  permits?: number;
  higher?: number;
  /**
   * Format 2 (committed decisions): the decision's place among its key's decisions
   * in the order they took effect, assigned by the store where it decided (null:
   * an outcome unknown, whose place nobody was told). Absent: line order is that order.
   */
  order?: number | null;
}

/** A decision's outcome in one word: accepted, refused, or unknown (format 2's `accepted: null`). */
export const outcomeWord = (d: Pick<ResourceDecision, "accepted">): "accepted" | "refused" | "unknown" => (d.accepted === null ? "unknown" : d.accepted ? "accepted" : "refused");

export type Validity = true | false | "unknown";

/** One anomaly found, with the events that prove it and why, in a sentence. */
export interface Witness {
  key?: string;
  /** `index` values of history events the argument rests on. */
  events?: number[];
  /** `seq` values of resource decisions the argument rests on. */
  seqs?: number[];
  explanation: string;
  [detail: string]: unknown;
}

export const ANOMALY_TYPES = [
  "stale-write-accepted",
  "interleaved-writers",
  "false-rejection",
  "duplicate-fence",
  "fence-regression",
  "lost-update",
  "mutex-violation",
  "expired-on-arrival",
  "lost-lock-unnoticed",
  "orphan-lock-node",
  // Format 2's lock kinds.
  "rw-violation",
  "semaphore-overflow",
  "reentrancy-violation",
  "grant-after-cancel",
] as const;
export type AnomalyType = (typeof ANOMALY_TYPES)[number];

/** Findings about progress, not safety (format 2): they make a run invalid only with --liveness strict. */
export const LIVENESS_TYPES = ["stuck-lock"] as const;

/** results.json */
export interface Results {
  valid: Validity;
  anomaly_types: string[];
  anomalies: Record<string, Witness[]>;
  /** Format 2: liveness findings by type (stuck-lock), and whether they counted toward `valid`. */
  liveness?: { strict: boolean; findings: Record<string, Witness[]> };
  /** Where clocks may be off (run.json `clock_error`): anomalies that hold for some placement of the instants within the bounds but not for every one; they decide nothing. */
  possible?: { anomaly_types: string[]; anomalies: Record<string, Witness[]>; anomaly_counts: Record<string, number> };
  stats: Record<string, unknown>;
}

/** File names inside a run directory. */
export const RUN_FILES = {
  run: "run.json",
  history: "history.ndjson",
  resource: "resource.ndjson",
  results: "results.json",
  report: "report.html",
  /** Written only when an adapter program broke the protocol (store/protocol-errors.ts). */
  protocolErrors: "protocol-errors.ndjson",
  logs: "logs",
} as const;

/** The figures every run reports; the checker fills them into results.json `stats`. */
export interface RunStats {
  /** Client and nemesis events in the history. */
  events: number;
  /** From the first event to the last, in seconds. */
  duration_s: number;
  /** Completions per operation `f`. */
  ops: Record<string, { ok: number; fail: number; info: number }>;
  /** Completed client operations per second of the run. */
  ops_per_s: number;
  /** Latency of acquires that completed ok, in milliseconds (null when none did). */
  acquire_latency_ms: { p50: number; p99: number; max: number } | null;
  writes_accepted: number;
  stale_writes_refused: number;
  /** Holds of one key that overlapped only because a lease expired (not anomalies). */
  lease_overlaps: number;
  /** Faults injected: count of nemesis start events by `f`. */
  faults: Record<string, number>;
  [more: string]: unknown;
}
