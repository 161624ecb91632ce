// npm dynamodb-lock-client 0.7.3 as its README uses it: a FailOpen client on
// the v2 aws-sdk's DocumentClient it is written against, a lease with a
// heartbeat, and the lock's `fencingToken` as the hold's fence.
//
// What it does: an acquire reads the item; if there is none it puts one
// (attribute_not_exists); if there is one it waits that item's lease
// (leaseDurationMs) and puts its own only if the item's guid and fencingToken
// are still the ones it read, with the token one higher. Each heartbeat puts
// the item again with a new guid, conditional on the old one. A release keeps
// the item (leaseDurationMs 1) so that the token keeps counting.
//
// What it tells its user, and so what the history can say: a heartbeat that
// fails (refused, or no answer in time) is an "error" event on the lock, after
// which it sends no more heartbeats; it never says the lock is lost, and a
// release after such a loss still reports success. The "error" event is
// recorded as a `suspended` notice, nothing more.
//
// Its own retries are off (maxRetries 0): a put whose reply was lost would be
// sent again and refused by its own first attempt's guid.
import { createRequire } from "node:module";
import type DynamoDB from "aws-sdk/clients/dynamodb.js";
import type { FailOpen as FailOpenClient, Lock as LibraryLock } from "dynamodb-lock-client";
import type { ClientContext, Hold, LockClient, NoticeSink, Outcome } from "../../clients/lock.ts";
import { accessOf, agentsFor, classifyDynamoError, LOCAL_ACCOUNT, LOCK_KEY, lockTableName, refusalOrThrow } from "./connection.ts";

const require = createRequire(import.meta.url);
// The v2 SDK announces its end of support on every start unless told not to.
process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE ??= "1";
const { DocumentClient } = require("aws-sdk/clients/dynamodb") as typeof DynamoDB;
const { FailOpen } = require("dynamodb-lock-client") as { FailOpen: typeof FailOpenClient };

/** The library's error when every attempt found the lock held (its conditional puts refused). */
const NOT_ACQUIRED = "FailedToAcquireLock";

/**
 * Attempts after the first: each waits out the lease of the holder it found, so
 * as many as fit in the acquire timeout, counting the first one's wait.
 */
export const retriesWithin = (timeoutMs: number, leaseMs: number): number => Math.max(0, Math.floor(timeoutMs / leaseMs) - 1);

export class DynamoLockClientLibrary implements LockClient {
  /** The library heartbeats by itself: no renew watchdog. */
  readonly renews = false;
  private readonly documents: InstanceType<typeof DocumentClient>;
  private readonly ownerPrefix: string;
  private readonly notice: NoticeSink | undefined;
  private readonly log: ((line: string) => void) | undefined;
  private holds = 0;
  private readonly held = new Map<string, LibraryLock>();

  private readonly table: string;

  constructor(ctx: ClientContext) {
    const endpoint = ctx.endpoints[0];
    // A DynamoDB of the user's: its URL and account, and the run's table, with
    // the sockets dialing the worker's link (as the v3 clients do). The region
    // and credentials are given, so the v2 SDK reads none of its own.
    const access = accessOf(ctx);
    const account = access?.account ?? LOCAL_ACCOUNT;
    this.table = access?.table ?? lockTableName();
    this.documents = new DocumentClient({
      endpoint: access?.url ?? `http://${endpoint.host}:${endpoint.port}`,
      region: account.region,
      credentials: account.credentials ?? null,
      maxRetries: 0,
      // timeout: the socket's idle time, so a request into a partition ends.
      httpOptions: {
        timeout: ctx.commandTimeoutMs,
        connectTimeout: ctx.commandTimeoutMs,
        ...(access ? { agent: Object.values(agentsFor(access.url, endpoint))[0] } : {}),
      },
    });
    this.ownerPrefix = ctx.ownerPrefix;
    this.notice = ctx.notice;
    this.log = ctx.log;
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const owner = `${this.ownerPrefix}-h${++this.holds}`;
    const client = new FailOpen({
      dynamodb: this.documents,
      lockTable: this.table,
      partitionKey: LOCK_KEY,
      leaseDurationMs: ttlMs,
      heartbeatPeriodMs: Math.max(1, Math.floor(ttlMs / 3)),
      owner,
      retryCount: retriesWithin(timeoutMs, ttlMs),
    });
    let lock: LibraryLock;
    try {
      lock = await new Promise<LibraryLock>((resolve, reject) => client.acquireLock(key, (err, l) => (err ? reject(err) : resolve(l))));
    } catch (err) {
      if ((err as { code?: unknown }).code === NOT_ACQUIRED) return { type: "fail", error: timeoutMs > 0 ? "timeout" : "busy" };
      return { type: "fail", error: refusalOrThrow(err) };
    }
    // Without a listener, the event would throw from a timer and end the process.
    lock.on("error", (err: Error) => {
      this.log?.(`dynamodb-lock-client: a heartbeat of ${owner} on ${key} failed (${classifyDynamoError(err).error}: ${err.message}); it sends no more`);
      this.notice?.("suspended", key, owner);
    });
    this.held.set(owner, lock);
    return { type: "ok", value: { owner, fence: lock.fencingToken, ttlMs } };
  }

  /** The library has no renew of its own (it heartbeats by itself, renews is false): the workload never asks. */
  async renew(): Promise<Outcome<{ ttlMs: number }>> {
    return { type: "fail", error: "not-supported" };
  }

  /** What its release says: no error is a release, even of a lock it had lost. */
  async release(_key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const lock = this.held.get(hold.owner);
    if (!lock) return { type: "fail", error: "not-owner" };
    this.held.delete(hold.owner);
    try {
      await new Promise<void>((resolve, reject) => lock.release((err) => (err ? reject(err) : resolve())));
    } catch (err) {
      return { type: "fail", error: refusalOrThrow(err) };
    }
    return { type: "ok", value: { released: true } };
  }

  async close(): Promise<void> {
    // The library stops a lock's heartbeats only in release(), which would write;
    // a closing client just stops sending them.
    for (const lock of this.held.values()) {
      lock._released = true;
      clearTimeout(lock.heartbeatTimeout);
    }
    this.held.clear();
  }
}
