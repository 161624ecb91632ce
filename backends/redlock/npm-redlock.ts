// How fencecheck drives an npm redlock package (5.0.0-beta.2 as `redlock`, 4.2.0
// as `redlock4`, the sesame fork): every call it makes recorded on the
// RedlockNodes, and what a failed attempt may have left on the nodes judged from
// that record (redlock-proof.ts), never from the library's word. The packages
// differ only in their calls, their error and who retries; each one's file says
// what it does differently.
import type { Hold, LockClient, Outcome } from "../../clients/lock.ts";
import { RedlockNodes, script, waitFor, perNodeWait, retryDelay, type LibraryClient, type RedlockClientOptions, type Script } from "../redis/nodes.ts";
import { mayStillHold, failReason, releaseOutcome, RedlockUnknown } from "../redis/proof.ts";
import { redlockFence } from "../redis/fence-counters.ts";
import { sleep } from "../../lib/index.ts";

/** What every package's lock carries: the owner value set on the nodes, and the Date.now() ms it stops being valid. */
export interface LibraryLock {
  value: string;
  expiration: number;
}

/** One package over our recorded nodes. */
export interface RedlockLibrary<L extends LibraryLock> {
  /** How messages name it ("redlock 4"). */
  name: string;
  /** Its Lua scripts' text: a recorded call is known by the script it runs. */
  scripts: { grant: string; extend: string; release: string };
  /** Which ARGV of its scripts is the lock's value (default 0). */
  ownerArg?: number;
  /**
   * True: `lock` retries by itself (its own defaults) within the acquire timeout,
   * and one call is the whole acquire. Otherwise its retries are off, each call is
   * one attempt, and this client retries until the timeout.
   */
  retriesItself?: boolean;
  lock(key: string, ttlMs: number, timeoutMs: number): Promise<L>;
  /** The lock as extended: 5 returns a new one, 4 the same one updated. */
  extend(lock: L, ttlMs: number): Promise<L>;
  unlock(lock: L): Promise<void>;
  /** The package's own verdict on an attempt; any other error is a bug and is thrown as is. */
  isLockError(e: unknown): boolean;
}

export class NpmRedlock<L extends LibraryLock> implements LockClient {
  private readonly nodes: RedlockNodes;
  private readonly lib: RedlockLibrary<L>;
  private readonly scripts: Script[];
  /** The library's Lock of each hold, replaced by what `extend` returns. */
  private readonly locks = new Map<string, L>();
  private holds = 0;

  constructor(
    private readonly opts: RedlockClientOptions,
    library: (clients: LibraryClient[]) => RedlockLibrary<L>,
  ) {
    this.nodes = new RedlockNodes(opts.endpoints, opts.commandTimeoutMs);
    this.lib = library(opts.endpoints.map((_, i) => this.nodes.libraryClient(i, () => this.scripts)));
    const s = this.lib.scripts;
    const at = this.lib.ownerArg ?? 0;
    this.scripts = [script("grant", s.grant, at), script("extend", s.extend, at), script("release", s.release, at)];
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const { nodes, opts, lib } = this;
    const deadline = Date.now() + timeoutMs;
    await nodes.ready();
    for (;;) {
      const calls = nodes.begin();
      let lock: L;
      try {
        lock = await lib.lock(key, ttlMs, timeoutMs);
      } catch (e) {
        if (!lib.isLockError(e)) throw e;
        // Every package has sent its unlock to every node before it gives up.
        if (await mayStillHold(calls, nodes.size, nodes.quorum, ["grant"]))
          throw new RedlockUnknown("maybe-held", `acquire ${key}: ${lib.name} gave up with nodes unanswered; a majority may hold its value`);
        const reason = failReason(calls, nodes.quorum, "grant", "busy");
        if (lib.retriesItself || Date.now() >= deadline) return { type: "fail", error: reason };
        await sleep(retryDelay(opts.rng, deadline));
        continue;
      }
      // Held now: waiting for the late grants and the fence's round trip below do not move the acquire's ok.
      const answeredAt = process.hrtime.bigint();
      // What was left of the lease when the package handed the lock over: a pause
      // while this client fetches the fence is the caller's bad luck (K1), not the
      // package returning a spent lease (K5, node-redlock #296).
      const validityMs = lock.expiration - Date.now();
      // 5 decides on the first quorum; the nodes that grant a moment later granted
      // too, and max-incr counts on every node that granted. A node that has not
      // answered within the short per-node wait is left out, as it would be anywhere.
      // (4 has waited for every node already: nothing is left to wait for.)
      const wait = perNodeWait(opts, ttlMs);
      const grants = calls.filter((c) => c.kind === "grant");
      if (opts.fenceSource === "max-incr") await waitFor(grants, wait);
      // A library that retries by itself may have granted on a node in an earlier round.
      const granted = [...new Set(grants.filter((c) => c.vote === "yes").map((c) => c.node))];
      const fence = await redlockFence(nodes, opts.fenceSource, key, lock.value, granted, wait);
      const owner = `${opts.ownerPrefix}-h${++this.holds}`;
      this.locks.set(owner, lock);
      return { type: "ok", value: { owner, fence, ttlMs, answeredAt, extra: { validity_ms: validityMs, granted: granted.map((i) => nodes.name(i)) } } };
    }
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const { nodes, lib } = this;
    const lock = this.locks.get(hold.owner);
    if (!lock) return { type: "fail", error: "not-owner" };
    await nodes.ready();
    const calls = nodes.begin();
    try {
      this.locks.set(hold.owner, await lib.extend(lock, ttlMs));
      return { type: "ok", value: { ttlMs } };
    } catch (e) {
      if (!lib.isLockError(e)) throw e;
      // Each refuses, without sending anything, a lock past its own expiration.
      if (calls.length === 0) return { type: "fail", error: "expired" };
      if (await mayStillHold(calls, nodes.size, nodes.quorum, ["extend"]))
        throw new RedlockUnknown("timeout", `renew ${key}: too few answers to tell whether a majority still holds the lock`);
      return { type: "fail", error: failReason(calls, nodes.quorum, "extend", "not-owner") };
    }
  }

  async release(_key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const { nodes, lib } = this;
    const lock = this.locks.get(hold.owner);
    if (!lock) return { type: "ok", value: { released: false } };
    this.locks.delete(hold.owner);
    await nodes.ready();
    const calls = nodes.begin();
    try {
      await lib.unlock(lock);
      return { type: "ok", value: { released: true } };
    } catch (e) {
      if (!lib.isLockError(e)) throw e;
      return { type: "ok", value: await releaseOutcome(calls) };
    }
  }

  async close(): Promise<void> {
    this.nodes.close();
  }
}
