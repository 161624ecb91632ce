// The npm package `redlock` 5.0.0-beta.2, the library people use, over every node.
// It decides as soon as a quorum has answered and never checks that the lease
// is still valid when it does (K5): a lock it returns may already have expired,
// which its `validity_ms` (expiration - now) then shows as negative. Its own
// retries are off (retryCount 0): this client retries within --acquire-timeout,
// so each attempt's calls are known and a failed one can be judged honestly.
import Redlock, { ExecutionError, type Lock } from "redlock";
import type { Redis } from "ioredis";
import type { Hold, LockClient, Outcome } from "./lock.ts";
import { RedlockNodes, script, waitFor, perNodeWait, retryDelay, type RedlockClientOptions, type Script } from "./redlock-nodes.ts";
import { mayStillHold, failReason, releaseOutcome, RedlockUnknown } from "./redlock-proof.ts";
import { redlockFence } from "./redlock-fence.ts";
import { sleep } from "../lib/index.ts";

const ONCE = { retryCount: 0 };

export class NodeRedlock implements LockClient {
  private readonly nodes: RedlockNodes;
  private readonly redlock: Redlock;
  private readonly scripts: Script[];
  /** The library's Lock of each hold: `extend` returns a new one, which replaces it. */
  private readonly locks = new Map<string, Lock>();
  private holds = 0;

  constructor(private readonly opts: RedlockClientOptions) {
    this.nodes = new RedlockNodes(opts.endpoints, opts.commandTimeoutMs);
    // Typed as ioredis clients for the library; they are recorders in front of them.
    const clients = opts.endpoints.map((_, i) => this.nodes.libraryClient(i, () => this.scripts) as unknown as Redis);
    this.redlock = new Redlock(clients, { ...ONCE, driftFactor: 0.01 });
    const s = this.redlock.scripts;
    this.scripts = [script("grant", s.acquireScript.value), script("extend", s.extendScript.value), script("release", s.releaseScript.value)];
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const { nodes, opts } = this;
    const deadline = Date.now() + timeoutMs;
    await nodes.ready();
    for (;;) {
      const calls = nodes.begin();
      let lock: Lock;
      try {
        lock = await this.redlock.acquire([key], ttlMs, ONCE);
      } catch (e) {
        if (!(e instanceof ExecutionError)) throw e;
        // The library has already sent its release to every node.
        if (await mayStillHold(calls, nodes.size, nodes.quorum, ["grant"]))
          throw new RedlockUnknown("maybe-held", `acquire ${key}: redlock gave up with nodes unanswered; a majority may hold its value`);
        const reason = failReason(calls, nodes.quorum, "grant", "busy");
        if (Date.now() >= deadline) return { type: "fail", error: reason };
        await sleep(retryDelay(opts.rng, deadline));
        continue;
      }
      // It decided on the first quorum; the nodes that grant a moment later granted
      // too, and max-incr counts on every node that granted. A node that has not
      // answered within the short per-node wait is left out, as it would be anywhere.
      const wait = perNodeWait(opts, ttlMs);
      const grants = calls.filter((c) => c.kind === "grant");
      if (opts.fenceSource === "max-incr") await waitFor(grants, wait);
      const granted = grants.filter((c) => c.vote === "yes").map((c) => c.node);
      const fence = await redlockFence(nodes, opts.fenceSource, key, lock.value, granted, wait);
      const owner = `${opts.ownerPrefix}-h${++this.holds}`;
      this.locks.set(owner, lock);
      return { type: "ok", value: { owner, fence, ttlMs, extra: { validity_ms: lock.expiration - Date.now(), granted: granted.map((i) => nodes.name(i)) } } };
    }
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const { nodes } = this;
    const lock = this.locks.get(hold.owner);
    if (!lock) return { type: "fail", error: "not-owner" };
    await nodes.ready();
    const calls = nodes.begin();
    try {
      this.locks.set(hold.owner, await this.redlock.extend(lock, ttlMs, ONCE));
      return { type: "ok", value: { ttlMs } };
    } catch (e) {
      if (!(e instanceof ExecutionError)) throw e;
      // It refuses, without sending anything, a lock past its own expiration.
      if (calls.length === 0) return { type: "fail", error: "expired" };
      if (await mayStillHold(calls, nodes.size, nodes.quorum, ["extend"]))
        throw new RedlockUnknown("timeout", `renew ${key}: too few answers to tell whether a majority extended the lock`);
      return { type: "fail", error: failReason(calls, nodes.quorum, "extend", "not-owner") };
    }
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const { nodes } = this;
    const lock = this.locks.get(hold.owner);
    if (!lock) return { type: "ok", value: { released: false } };
    this.locks.delete(hold.owner);
    await nodes.ready();
    const calls = nodes.begin();
    try {
      await this.redlock.release(lock, ONCE);
      return { type: "ok", value: { released: true } };
    } catch (e) {
      if (!(e instanceof ExecutionError)) throw e;
      return { type: "ok", value: await releaseOutcome(calls) };
    }
  }

  async close(): Promise<void> {
    this.nodes.close();
  }
}
