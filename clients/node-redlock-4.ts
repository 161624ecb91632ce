// The npm package `redlock` 4.2.0 (npm's `latest`), installed beside 5 as
// `redlock4`: the callback era's `lock`/`unlock`/`extend`. Unlike 5 it waits for
// every node (each bounded by the command timeout) and refuses a quorum that came
// back after the lease's validity. A failed `extend` unlocks the lock on every
// node: the hold is given up, not just left to expire. Its own retries are off;
// this client retries within --acquire-timeout, as node-redlock does.
import Redlock4 from "redlock4";
import type { Hold, LockClient, Outcome } from "./lock.ts";
import { RedlockNodes, script, perNodeWait, retryDelay, type RedlockClientOptions, type Script } from "./redlock-nodes.ts";
import { mayStillHold, failReason, releaseOutcome, RedlockUnknown } from "./redlock-proof.ts";
import { redlockFence } from "./redlock-fence.ts";
import { sleep } from "../lib/index.ts";

export class NodeRedlock4 implements LockClient {
  private readonly nodes: RedlockNodes;
  private readonly redlock: Redlock4;
  private readonly scripts: Script[];
  private readonly locks = new Map<string, Redlock4.Lock>();
  private holds = 0;

  constructor(private readonly opts: RedlockClientOptions) {
    this.nodes = new RedlockNodes(opts.endpoints, opts.commandTimeoutMs);
    const clients = opts.endpoints.map((_, i) => this.nodes.libraryClient(i, () => this.scripts));
    this.redlock = new Redlock4(clients, { retryCount: 0, driftFactor: 0.01 });
    // Its per-node errors, which it tolerates by design; the record has them.
    this.redlock.on("clientError", () => {});
    const s = this.redlock.scripts;
    this.scripts = [script("grant", s.lockScript.value), script("extend", s.extendScript.value), script("release", s.unlockScript.value)];
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const { nodes, opts } = this;
    const deadline = Date.now() + timeoutMs;
    await nodes.ready();
    for (;;) {
      const calls = nodes.begin();
      let lock: Redlock4.Lock;
      try {
        lock = await this.redlock.lock(key, ttlMs);
      } catch (e) {
        if (!(e instanceof Redlock4.LockError)) throw e;
        // It has unlocked every node (and waited for them) before saying so.
        if (await mayStillHold(calls, nodes.size, nodes.quorum, ["grant"]))
          throw new RedlockUnknown("maybe-held", `acquire ${key}: redlock 4 gave up with nodes unanswered; a majority may hold its value`);
        const reason = failReason(calls, nodes.quorum, "grant", "busy");
        if (Date.now() >= deadline) return { type: "fail", error: reason };
        await sleep(retryDelay(opts.rng, deadline));
        continue;
      }
      const granted = calls.filter((c) => c.kind === "grant" && c.vote === "yes").map((c) => c.node);
      const fence = await redlockFence(nodes, opts.fenceSource, key, lock.value, granted, perNodeWait(opts, ttlMs));
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
      await this.redlock.extend(lock, ttlMs);
      return { type: "ok", value: { ttlMs } };
    } catch (e) {
      if (!(e instanceof Redlock4.LockError)) throw e;
      if (calls.length === 0) return { type: "fail", error: "expired" };
      // A failed extend has unlocked every node.
      if (await mayStillHold(calls, nodes.size, nodes.quorum, ["extend"]))
        throw new RedlockUnknown("timeout", `renew ${key}: too few answers to tell whether a majority still holds the lock`);
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
      await this.redlock.unlock(lock);
      return { type: "ok", value: { released: true } };
    } catch (e) {
      if (!(e instanceof Redlock4.LockError)) throw e;
      return { type: "ok", value: await releaseOutcome(calls) };
    }
  }

  async close(): Promise<void> {
    this.nodes.close();
  }
}
