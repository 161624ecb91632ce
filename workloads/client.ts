// One logical client as a workload sees it: it issues operations one at a time and
// every operation is recorded as an invoke and a completion. This is the one place
// where an exception becomes an `info` completion; clients and workloads never
// catch to guess an outcome.
import type { HistoryEvent, NoticeKind, UnindexedEvent } from "../store/events.ts";
import type { RunClock } from "../store/clock.ts";
import { hrtime } from "node:process";
import { UnknownOutcome } from "../clients/lock.ts";

export type Completion =
  /** `at`: when the answer arrived (process.hrtime.bigint()), where that was before the operation's function returned. */
  | { type: "ok"; value?: Record<string, unknown>; at?: bigint }
  | { type: "fail"; error: string; value?: Record<string, unknown> }
  | { type: "info"; error: string };

/** A completion as op() gives it back: with its invoke's time on the run's clock (absent for an operation dropped unrecorded). */
export type Recorded = Completion & { invoked?: number };

/** What the operation's function returns: ok or fail. A throw means "unknown". */
export type Answer = Exclude<Completion, { type: "info" }>;

/** An error that proves the request never left: the operation certainly did not happen. */
export class NotSent extends Error {
  constructor(public readonly code: string, message = code) {
    super(message);
  }
}

/** A short, machine-readable code for why an outcome is unknown. */
export function errorCode(err: unknown): string {
  if (err instanceof UnknownOutcome) return err.error;
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === "string" ? e.code : "";
  const msg = typeof e?.message === "string" ? e.message : String(err);
  if (code === "ECONNREFUSED" || code === "conn-refused") return "conn-refused";
  if (code === "ECONNRESET" || code === "EPIPE" || code === "conn-reset") return "conn-reset";
  if (code === "ETIMEDOUT" || code === "timeout" || /timed? ?out/i.test(msg)) return "timeout";
  if (/connection is closed|stream isn't writeable|not connected/i.test(msg)) return "conn-closed";
  return code ? code.toLowerCase() : "error";
}

/** Errors that mean the request was never sent, so `fail` is the honest completion. */
function neverSent(err: unknown): boolean {
  if (err instanceof NotSent) return true;
  if (err instanceof UnknownOutcome) return false;
  const msg = (err as { message?: unknown })?.message;
  // ioredis refuses at once, without sending, when the connection is down and the
  // offline queue is off; a refused TCP connect also sent nothing.
  const code = (err as { code?: unknown })?.code;
  return (typeof msg === "string" && /stream isn't writeable/i.test(msg)) || code === "ECONNREFUSED" || code === "conn-refused";
}

const SKIPPED: Completion = { type: "fail", error: "skipped" };

export class LogicalClient {
  private tail: Promise<unknown> = Promise.resolve();
  private _process: number;

  constructor(
    /** 0-based client number in the run. */
    readonly id: number,
    /** Retired processes are replaced by process + concurrency, as in Jepsen. */
    private readonly concurrency: number,
    private readonly clock: RunClock,
    private readonly emit: (event: UnindexedEvent) => void,
  ) {
    this._process = id;
  }

  get process(): number {
    return this._process;
  }

  /**
   * What the lock library told its user (format 2 notices): recorded at once,
   * under the client's current process, even while an operation is outstanding.
   */
  notice(f: NoticeKind, key: string | undefined, owner: string | null): void {
    const event: UnindexedEvent = { time: this.clock(), process: this._process, type: "notice", f, value: { owner } };
    if (key !== undefined) event.key = key;
    this.emit(event);
  }

  /**
   * Run one operation. Operations of one client are serialised (a renew watchdog
   * waits for a write in flight), because a process has at most one outstanding.
   */
  op(f: string, key: string, value: Record<string, unknown>, run: () => Promise<Answer>, when?: () => boolean): Promise<Recorded> {
    // `when` is asked again once the operation's turn comes: a queued renew whose
    // hold has been released by then is dropped, never recorded.
    const next = this.tail.then(() => (when && !when() ? SKIPPED : this.record(f, key, value, run)));
    this.tail = next.catch(() => {});
    return next;
  }

  /** The run's clock now, as the history's times are read. */
  now(): number {
    return this.clock();
  }

  private async record(f: string, key: string, value: Record<string, unknown>, run: () => Promise<Answer>): Promise<Recorded> {
    const process = this._process;
    const invoked = this.clock();
    this.emit({ time: invoked, process, type: "invoke", f, key, value });
    let done: Completion;
    try {
      done = await run();
    } catch (err) {
      done = neverSent(err) ? { type: "fail", error: errorCode(err) } : { type: "info", error: errorCode(err) };
    }
    const now = this.clock();
    // An ok answered before the function returned (an acquire whose fence was
    // fetched after the lock answered) is stamped when the answer came; never
    // before its invoke, so the process's lines stay in order.
    const at = done.type === "ok" && done.at !== undefined ? Math.max(invoked, now - Number(hrtime.bigint() - done.at)) : now;
    const event: UnindexedEvent = { time: at, process, type: done.type, f, key };
    if ("value" in done && done.value !== undefined) event.value = done.value;
    if ("error" in done) event.error = done.error;
    this.emit(event);
    // A process whose last operation has an unknown outcome never issues another;
    // the client carries on as a new process.
    if (done.type === "info") this._process += this.concurrency;
    return { ...done, invoked };
  }
}

export type { HistoryEvent };
