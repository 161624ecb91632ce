// What both etcd lock clients share: an etcd3 connection that is honest about
// outcomes (each call sent once, with a deadline), lease TTLs in whole seconds,
// one-off keep-alives, and the holds with their renew and compare-and-delete release.
import { Etcd3, type IOptions, type IRangeRequest } from "etcd3";
import type { ClientContext, Endpoint } from "../../clients/lock.ts";
import type { AcquireRequest, Hold, LockClient, Outcome } from "../../clients/lock.ts";

type Policy = NonNullable<NonNullable<IOptions["faultHandling"]>["global"]>;

type Call<T> = (ctx: { signal: AbortSignal }) => PromiseLike<T> | T;

/**
 * Each call once. etcd3's default global policy retries a failed call up to three
 * times: a put whose answer was lost would be sent again behind the history's back.
 */
const callOnce = { execute: async <T>(fn: Call<T>) => fn({ signal: new AbortController().signal }) } as unknown as Policy;

/** How long a member whose call failed (no answer, no connection, no leader) is passed over: about an election. */
const SKIP_MS = 1000;
const SKIPPED = "member passed over after a failure";

/**
 * Per member: after a call to it failed, pass it over for SKIP_MS, as a client-side
 * balancer marks an endpoint unhealthy. A call passed over is not sent, and
 * etcd3's pool then tries the next member; only when every member is passed over
 * does the call fail, certainly unsent. (This replaces etcd3's default per-member
 * breaker, which opens only after three failures and then for 5 s.)
 */
function passOverAfterFailure(): Policy {
  let until = 0;
  return {
    execute: async <T>(fn: Call<T>) => {
      if (Date.now() < until) throw new Error(SKIPPED);
      try {
        return await fn({ signal: new AbortController().signal });
      } catch (err) {
        // "leader changed" is the whole cluster electing, not this member failing.
        const e = classify(err);
        if (e instanceof EtcdCallError && e.code !== "leader-changed") until = Date.now() + SKIP_MS;
        throw err;
      }
    },
  } as unknown as Policy;
}

export function etcdClient(endpoints: Endpoint[], commandTimeoutMs: number): Etcd3 {
  return new Etcd3({
    hosts: endpoints.map((e) => `http://${e.host}:${e.port}`),
    // Documented by etcd3 but not read by 1.1.2; the call deadline below bounds connecting too.
    dialTimeout: commandTimeoutMs,
    faultHandling: { global: callOnce, host: passOverAfterFailure },
    // Streams (watches, keep-alives) get no default deadline: their callers bound them.
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: new Date(Date.now() + commandTimeoutMs) }),
    grpcOptions: {
      // Each logical client its own connections, as separate programs would have.
      "grpc.use_local_subchannel_pool": 1,
      // gRPC's reconnect backoff grows to 120 s by default; a healed link should be used again soon.
      "grpc.initial_reconnect_backoff_ms": 100,
      "grpc.max_reconnect_backoff_ms": 1000,
    },
  });
}

/**
 * One etcd3 client for every logical client of this process that reaches the
 * same members (--connections per-worker), closed when the last of them closes.
 * A thousand etcd3 clients in one Node process cost three gRPC channels and
 * connections each, and their set-up alone stalled a worker's event loop for
 * seconds (the contention experiment at 1,000 contenders): the harness, not etcd,
 * set the pace.
 */
const shared = new Map<string, { client: Etcd3; users: number }>();

export function sharedEtcdClient(endpoints: Endpoint[], commandTimeoutMs: number): { client: Etcd3; release(): void } {
  const id = JSON.stringify([endpoints.map((e) => [e.host, e.port]), commandTimeoutMs]);
  let entry = shared.get(id);
  if (!entry) shared.set(id, (entry = { client: etcdClient(endpoints, commandTimeoutMs), users: 0 }));
  entry.users++;
  const mine = entry;
  let released = false;
  return {
    client: mine.client,
    release: () => {
      if (released) return;
      released = true;
      if (--mine.users > 0) return;
      shared.delete(id);
      mine.client.close();
    },
  };
}

/** etcd leases have whole seconds: the hold's TTL rounded up, at least 1 s. */
export const leaseSeconds = (ttlMs: number): number => Math.max(1, Math.ceil(ttlMs / 1000));

/** The facts of the acquire's ok value about the lease behind a hold. */
export function leaseFacts(ttlMs: number, leaseId: string): Record<string, unknown> {
  const granted = leaseSeconds(ttlMs) * 1000;
  return { lease: hex(leaseId), ...(granted !== ttlMs ? { ttl_rounded_up_from_ms: ttlMs } : {}) };
}

/** Lease ids come as decimal strings (int64); keys and logs use hex, as etcd prints them. */
export const hex = (decimal: string): string => BigInt(decimal).toString(16);

export const key = (k: string): Buffer => Buffer.from(k);

/** The end of the key range `prefix*`. */
export function prefixEnd(prefix: string): Buffer {
  const b = Buffer.from(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i] < 0xff) {
      const end = Buffer.from(b.subarray(0, i + 1));
      end[i]++;
      return end;
    }
  }
  return Buffer.from([0]);
}

export const under = (prefix: string): Pick<IRangeRequest, "key" | "range_end"> => ({ key: key(prefix), range_end: prefixEnd(prefix) });

/**
 * One keep-alive for a lease: its TTL in seconds as etcd answered, 0 when the
 * lease is gone (expired or revoked). Throws when no answer came in time.
 */
export async function keepAliveOnce(client: Etcd3, leaseId: string, timeoutMs: number): Promise<number> {
  const stream = await client.leaseClient.leaseKeepAlive({ deadline: new Date(Date.now() + timeoutMs) });
  try {
    const res = await new Promise<{ TTL: string }>((resolve, reject) => {
      stream.on("data", resolve);
      stream.on("error", reject);
      stream.on("end", () => reject(new Error("keep-alive stream ended without an answer")));
      stream.write({ ID: leaseId });
    });
    return Number(res.TTL);
  } finally {
    stream.end();
  }
}

/** Delete `k` only if it is still attached to `leaseId`: true when it was (the hold was still ours). */
async function deleteIfOurs(client: Etcd3, k: string, leaseId: string): Promise<boolean> {
  const res = await client.kv.txn({
    compare: [{ key: key(k), target: "Lease", result: "Equal", lease: leaseId }],
    success: [{ request_delete_range: { key: key(k) } }],
  });
  return res.succeeded;
}

/** A hold on etcd: the key that is the lock, and the lease it lives under. */
export interface LeaseHold {
  leaseId: string;
  key: string;
}

/**
 * What both etcd lock clients are around their own acquire: one connection per
 * logical client, its holds by owner, the renew (one keep-alive: the key lives
 * exactly as long as its lease, so a live lease is a lock still held) and the
 * release. A subclass says how a released hold lets its lease go.
 */
export abstract class LeaseLock<H extends LeaseHold> implements LockClient {
  protected readonly client: Etcd3;
  protected readonly held = new Map<string, H>();
  private holds = 0;
  private readonly closeClient: () => void;

  constructor(protected readonly ctx: ClientContext) {
    if (ctx.options.sharedConnection) {
      const s = sharedEtcdClient(ctx.endpoints, ctx.commandTimeoutMs);
      this.client = s.client;
      this.closeClient = s.release;
    } else {
      const client = (this.client = etcdClient(ctx.endpoints, ctx.commandTimeoutMs));
      this.closeClient = () => client.close();
    }
  }

  abstract acquire(key: string, ttlMs: number, timeoutMs: number, request?: AcquireRequest): Promise<Outcome<Hold>>;

  /** Ends the lease of a hold just released: it holds nothing any more. */
  protected abstract letGo(h: H): Promise<void>;

  /** Leaves a hold whose release has an unknown outcome to its lease. */
  protected abandon(_h: H): void {}

  /** A new owner id, unique across the run. */
  protected nextOwner(): string {
    return `${this.ctx.ownerPrefix}-h${++this.holds}`;
  }

  async renew(_k: string, hold: Hold, _ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const h = this.held.get(hold.owner);
    if (!h) return { type: "fail", error: "not-owner" };
    const ttlS = await call(keepAliveOnce(this.client, h.leaseId, this.ctx.commandTimeoutMs));
    return ttlS > 0 ? { type: "ok", value: { ttlMs: ttlS * 1000 } } : { type: "fail", error: "not-owner" };
  }

  /**
   * A compare-and-delete of the key against our lease says whether the lock was
   * still ours (a revoke alone cannot: it ignores a lease already gone); then the
   * lease is let go.
   */
  async release(_k: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const h = this.held.get(hold.owner);
    if (!h) return { type: "ok", value: { released: false } };
    this.held.delete(hold.owner);
    let released: boolean;
    try {
      released = await call(deleteIfOurs(this.client, h.key, h.leaseId));
    } catch (err) {
      this.abandon(h);
      throw err;
    }
    await this.letGo(h);
    return { type: "ok", value: { released } };
  }

  async close(): Promise<void> {
    this.closeClient();
  }
}

/** Revoke a lease, ignoring every error: only where the lease holds nothing that matters any more. */
export async function revokeQuietly(client: Etcd3, leaseId: string): Promise<void> {
  await client.leaseClient.leaseRevoke({ ID: leaseId }).catch(() => {});
}

/** A call that did not answer as asked; `code` is the history's short error. */
export class EtcdCallError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

/**
 * The short code of an etcd or gRPC error. "conn-refused" only where the call never
 * left: gRPC had no connection to send it on ("No connection established"), or every
 * member was passed over; the workload may then record a certain failure.
 */
export function classify(err: unknown): unknown {
  if (!(err instanceof Error) || err instanceof EtcdCallError) return err;
  const m = err.message;
  const code = /No connection established/i.test(m) || m.includes(SKIPPED)
    ? "conn-refused"
    : /DEADLINE_EXCEEDED|deadline exceeded|request timed out/i.test(m)
      ? "timeout"
      : /ECONNRESET|Connection dropped|EPIPE/i.test(m)
        ? "conn-reset"
        : /etcdserver: leader changed/i.test(m)
          ? "leader-changed"
          : /etcdserver: no leader/i.test(m)
            ? "no-leader"
            : /UNAVAILABLE/.test(m)
              ? "unavailable"
              : null;
  return code ? new EtcdCallError(code, m) : err;
}

/** Await an etcd call, its error classified. */
export async function call<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw classify(err);
  }
}

/** The short code of an error, for a `fail` value's cause. */
export function errorCode(err: unknown): string {
  const e = classify(err);
  return e instanceof EtcdCallError ? e.code : "error";
}
