// What a lock client is: acquire, renew, release. Kept small on purpose (Jepsen's
// client is open/invoke/close); optional abilities belong in other interfaces.
//
// Failures are values: a client returns `fail` when the lock service certainly
// did not do the thing (busy, not-owner) and throws when it cannot know (timeout,
// connection lost). The workload turns a throw into an `info` completion in one
// place, so clients never guess.
import { sleep } from "../lib/time.ts";
import type { Rng } from "../lib/random.ts";
import { LOCK_KINDS, CANCELLED_ERROR, CANCEL_UNKNOWN_ERROR } from "../store/events.ts";
import type { ProtocolErrorCode } from "../store/protocol-errors.ts";

/**
 * An outcome the client says it cannot know, in its own words (an adapter
 * program's `error` reply): thrown, and recorded as info with exactly that error.
 */
export class UnknownOutcome extends Error {
  constructor(readonly error: string, message: string = error) {
    super(message);
  }
}

export interface Hold {
  /** Unique per successful acquire, even within one process. */
  owner: string;
  /** The fencing token the lock service issued for this hold, or null if none. */
  fence: number | null;
  ttlMs: number;
  /** Extra facts a client reports in the acquire's ok value (e.g. Redlock validity). */
  extra?: Record<string, unknown>;
  /**
   * When the lock's answer arrived (process.hrtime.bigint()), for a client that
   * then fetches the fence in a round trip of its own: the acquire's ok is stamped
   * then, not after the fetch (docs/history-format.md, invoke and completion),
   * or a slow fetch would start the recorded hold late and hide an overlap.
   */
  answeredAt?: bigint;
}

/** The hold, marked as answered now unless its client marked it earlier (Hold.answeredAt). */
export const answeredNow = (hold: Hold): Hold => (hold.answeredAt === undefined ? { ...hold, answeredAt: process.hrtime.bigint() } : hold);

/** The lock kinds a workload may ask for (--lock), as docs/history-format.md names them. */
export { LOCK_KINDS };
export type LockKind = (typeof LOCK_KINDS)[number];

/**
 * What an acquire asks for beyond a plain mutex. Absent (or empty): an exclusive
 * hold of a mutex, as before lock kinds existed.
 */
export interface AcquireRequest {
  /** A read-write lock: a shared (read) or exclusive (write) hold. */
  mode?: "read" | "write";
  /**
   * A reentrant lock: the hold this acquire enters again (the same owner, its
   * count one higher). Its Hold keeps that owner; its fence is the outer one's or
   * a new one, as the client's kind says (fenceOnReentry).
   */
  reenter?: Hold;
  /** A counting semaphore: how many holds it lets in at once (--lock semaphore:N). */
  permits?: number;
  /**
   * Aborted when the workload gives up waiting (--cancel-rate): the client then
   * withdraws the waiter and returns fail "cancelled" if the service certainly
   * removed it, or throws UnknownOutcome("cancel-unknown") when it cannot know.
   * A cancelled fail's value names, as `owner`, the owner its queue entry was
   * made for; any acquire's ok (Hold.extra) or fail value may name, as `behind`,
   * the owner of the queue entry it last waited behind (the checker's
   * grant-after-cancel and stuck-lock read both).
   */
  signal?: AbortSignal;
}


// The errors of a withdrawn acquire, by the names the clients use (store/events.ts spells them).
export { CANCELLED_ERROR as CANCELLED, CANCEL_UNKNOWN_ERROR as CANCEL_UNKNOWN };

/**
 * The kinds of lock a client offers beyond the mutex, which the options are
 * checked against before a run starts (`--lock rw` with a client that has no read
 * mode is refused, naming what it offers).
 */
export interface LockKinds {
  /** A reentrant lock, and what a re-entry's fence is: the outer hold's ("same", Hazelcast) or a new one ("new", Redisson's RFencedLock). */
  reentrant?: { fenceOnReentry: "same" | "new" };
  rw?: boolean;
  semaphore?: boolean;
  /** It can withdraw a waiting acquire when its AbortSignal fires. */
  cancel?: boolean;
}

export type Outcome<T> = { type: "ok"; value: T } | { type: "fail"; error: string; value?: Record<string, unknown> };

export interface LockClient {
  /** `request` is absent for a mutex; the other kinds pass what their hold is (AcquireRequest). */
  acquire(key: string, ttlMs: number, timeoutMs: number, request?: AcquireRequest): Promise<Outcome<Hold>>;
  renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>>;
  /**
   * `lost`: the client knows why the lock was no longer its (ZooKeeper: "session-expired").
   * A reentrant client keeps each owner's count itself: releasing a re-entry's hold
   * lowers it by one, and only the release of the outermost frees the lock.
   */
  release(key: string, hold: Hold): Promise<Outcome<{ released: boolean; lost?: string }>>;
  close(): Promise<void>;
  /**
   * Optional: why the client knows a hold is lost (its session expired), or null.
   * The workload stops using a hold its client knows is lost.
   */
  lost?(hold: Hold): string | null;
  /** Optional: the library told its user this hold is gone (a `lost` notice); the workload then neither writes with it nor releases it. */
  toldLost?(hold: Hold): boolean;
  /** Optional: false when renew means nothing to this lock (no lease, or the library renews itself): no renew watchdog. */
  readonly renews?: boolean;
  /** Optional: resolves once the client can take requests (an adapter program started and answered init). */
  whenStarted?(): Promise<void>;
}

/** What a lock library may tell its user unasked (format 2 notices). */
export interface NoticeSink {
  (f: "lost" | "suspended" | "reconnected", key: string | undefined, owner: string | null): void;
}

/**
 * A lock client of the user's own, in one module (`--client ./my-lock.ts`): the
 * module's default export says what the lock is and makes one LockClient per
 * logical client (clients/adapter.ts loads and checks it).
 */
export interface LockAdapter {
  /** One line: what the lock is and how it works. */
  describe: string;
  /** The backends whose servers it talks to: "redis" (ctx.endpoints: one node), "redlock" (five), "etcd" (three members), "zookeeper" (three), "postgres" (one). */
  backends: readonly string[];
  /** Whether its holds carry a fencing token the lock service issued (Hold.fence), or null. */
  fences: boolean;
  /** Optional: the lock kinds it offers beyond the mutex (an adapter program's manifest says them in "kinds"). */
  kinds?: LockKinds;
  /** One client for one logical client; it may connect lazily (the first acquire) or at once. */
  create(ctx: ClientContext): LockClient;
}

/** How to make clients of one kind: the function a client's module gives once loaded. */
export type MakeClient = (ctx: ClientContext) => LockClient;

/**
 * Fences for a client whose lock issues none (--fence-source single or
 * max-incr): a wrapper that takes one from counters on the backend's servers
 * after each grant (a backend that has such counters offers it).
 */
export type FenceCounter = (inner: LockClient, ctx: ClientContext, source: "single" | "max-incr") => LockClient;

/** Where a hold's fence comes from when the lock issues none (Redlock, an adapter's lock): --fence-source. */
export const FENCE_SOURCES = ["none", "max-incr", "single"] as const;
export type FenceSource = (typeof FENCE_SOURCES)[number];

/** Options of the lock clients, set from the CLI; each client reads the ones it knows. */
export interface ClientOptions {
  /** Where a hold's fence comes from when the lock issues none, or makes it from several servers' counters: none, max-incr or single. */
  fenceSource?: FenceSource;
  /** The client pauses this long between the servers' replies and its decision, in the clients named (--pause-at replies). */
  pauseAfterReplies?: { ms: number; clients: number[] | "all" };
  /**
   * The logical clients of one worker share one connection to the service (its
   * channels and sockets), as the goroutines of one program share theirs
   * (--connections per-worker). Each still has its own leases and holds.
   */
  sharedConnection?: boolean;
  /** The backend's own options that its clients read (--release-gap, ...), by option name. */
  own?: Readonly<Record<string, string | number | boolean | string[] | undefined>>;
}

/** A node of the lock service as one client reaches it (through its worker's proxy). */
export interface Endpoint {
  name: string;
  host: string;
  port: number;
}

/**
 * What a client needs of a lock service beyond its endpoints' addresses, where
 * the service is the user's (--deploy external) and asks for more (an account, a
 * role, the run's own table or schema), by the backend's name: each backend's
 * clients read their own. Absent: a server of the run's own. It may carry
 * credentials: it reaches the workers over their IPC channel only, and nothing
 * writes it down.
 */
export type ServiceAccess = Readonly<Record<string, unknown>>;

export interface ClientContext {
  /** The logical client it serves, for options that single clients out. */
  id?: number;
  /** The lock service's nodes as this client reaches them. */
  endpoints: Endpoint[];
  /** Handed over the worker's IPC channel, never written down: it may carry credentials. */
  service?: ServiceAccess;
  ownerPrefix: string;
  commandTimeoutMs: number;
  rng: Rng;
  options: ClientOptions;
  /** The run's backend, TTL and seed, for clients that pass them on (an adapter program's init). */
  backend?: string;
  ttlMs?: number;
  seed?: number;
  /** Records a notice under the logical client's current process; absent where nothing records them (the set-up check). */
  notice?: NoticeSink;
  /** Where the client's own log lines go (the worker's log); absent: nowhere. */
  log?: (line: string) => void;
  /** Something the person running the test must hear of (an adapter program that broke the protocol): the run's console. */
  warn?: (line: string) => void;
  /**
   * An adapter program broke the protocol (not a timeout, which is an ordinary
   * info): the run records it (protocol-errors.ndjson) whether or not an
   * operation was outstanding; absent where nothing records them (the set-up check).
   */
  protocolError?: (e: { code: ProtocolErrorCode; pid: number; message: string }) => void;
}

/**
 * An acquire by polling, for locks with no queue to wait in (Redis SET NX, a
 * Postgres lease row): try once; until the deadline, again after a short random
 * pause. Spread, so waiters do not march in step; short, because a free lock
 * nobody has noticed yet is time the lock stands idle; not shorter than 10 ms,
 * because the waiters' tries are most of a run's traffic: at 2-10 ms, five
 * waiters make some 800 tries a second (one each 6 ms), each through the proxy
 * and back, about a third of a run's CPU, and they slow the holder they share a
 * worker with
 * (docs/measurements.md, "Waiters' retry"). Libraries wait longer still
 * (redis-py 100 ms, node-redlock 100-300 ms).
 */
export async function pollAcquire(tryOnce: () => Promise<Outcome<Hold> | null>, timeoutMs: number, rng: Rng): Promise<Outcome<Hold>> {
  // The wait is a duration: timed on the monotonic clock, so a jump of the wall
  // clock (--clock-target clients) moves what the lock compares, not how long we wait.
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const got = await tryOnce();
    if (got) return got;
    if (performance.now() >= deadline) return { type: "fail", error: timeoutMs > 0 ? "timeout" : "busy" };
    await sleep(Math.min(rng.between(10, 30), Math.max(0, deadline - performance.now())));
  }
}
