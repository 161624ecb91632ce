// The project's own Redlock, as the Redis documentation describes it: note the
// time; SET key owner NX PX ttl on every node in parallel, waiting a short time
// for each; the lock is acquired only if a majority said yes while the lease is
// still valid (validity = TTL - elapsed - drift); otherwise unlock every node and
// try again after a random delay. Renew and release compare the owner first, in
// Lua, on every node.
//
// `checkValidity: false` trusts a quorum of OKs however late it came: node-redlock
// 5's defect (K5), kept here on demand so a run can set the two side by side.
import type { Hold, LockClient, Outcome } from "../../clients/lock.ts";
import { RedlockNodes, script, waitFor, count, perNodeWait, retryDelay, type RedlockClientOptions } from "../redis/nodes.ts";
import { validityLeft } from "../../clients/majority.ts";
import { mayStillHold, failReason, releaseOutcome, RedlockUnknown } from "../redis/proof.ts";
import { redlockFence } from "../redis/fence-counters.ts";
import { sleep } from "../../lib/index.ts";

const RENEW = script(
  "extend",
  `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`,
);

const RELEASE = script(
  "release",
  `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`,
);

export class RedlockLock implements LockClient {
  private readonly nodes: RedlockNodes;
  private attempts = 0;

  constructor(private readonly opts: RedlockClientOptions) {
    this.nodes = new RedlockNodes(opts.endpoints, opts.commandTimeoutMs);
  }

  private unlockAll(key: string, owner: string): void {
    for (let i = 0; i < this.nodes.size; i++) this.nodes.eval(i, RELEASE, [key], [owner]);
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const { nodes, opts } = this;
    const deadline = Date.now() + timeoutMs;
    const wait = perNodeWait(opts, ttlMs);
    await nodes.ready();
    let pauseFirst = (opts.pauseAfterRepliesMs ?? 0) > 0;
    for (;;) {
      // A new owner per attempt: a late SET of an abandoned attempt can never pass for this one.
      const owner = `${opts.ownerPrefix}-h${++this.attempts}`;
      const calls = nodes.begin();
      const start = performance.now();
      for (let i = 0; i < nodes.size; i++) nodes.send(i, "grant", owner, (r) => r.set(key, owner, "PX", ttlMs, "NX"), (reply) => reply === "OK");
      await waitFor(calls, wait);
      // K5 on demand: the replies are in, and the client stalls (a GC pause) before it decides on them.
      if (pauseFirst) {
        pauseFirst = false;
        await sleep(opts.pauseAfterRepliesMs!);
      }
      const granted = calls.filter((c) => c.vote === "yes").map((c) => c.node);
      const validity = validityLeft(ttlMs, performance.now() - start);
      if (granted.length >= nodes.quorum && (validity > 0 || !opts.checkValidity)) {
        // Held now: the fence's round trip below does not move the acquire's ok.
        const answeredAt = process.hrtime.bigint();
        const fence = await redlockFence(nodes, opts.fenceSource, key, owner, granted, wait);
        // The validity it decided on: a pause while it fetches the fence is the
        // caller's bad luck (K1), not the lock handing over a spent lease.
        return { type: "ok", value: { owner, fence, ttlMs, answeredAt, extra: { validity_ms: validity, granted: granted.map((i) => nodes.name(i)) } } };
      }
      this.unlockAll(key, owner);
      if (await mayStillHold(calls, nodes.size, nodes.quorum, ["grant"]))
        throw new RedlockUnknown("maybe-held", `acquire ${key}: gave up with ${granted.length} grant(s) and nodes unanswered; a majority may hold ${owner}`);
      const reason = failReason(calls, nodes.quorum, "grant", "busy");
      if (Date.now() >= deadline) return { type: "fail", error: reason };
      await sleep(retryDelay(opts.rng, deadline));
    }
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const { nodes, opts } = this;
    await nodes.ready();
    const calls = nodes.begin();
    const start = performance.now();
    for (let i = 0; i < nodes.size; i++) nodes.eval(i, RENEW, [key], [hold.owner, ttlMs]);
    await waitFor(calls, perNodeWait(opts, ttlMs));
    const extended = count(calls, "yes") >= nodes.quorum;
    const valid = validityLeft(ttlMs, performance.now() - start) > 0;
    if (extended && (valid || !opts.checkValidity)) return { type: "ok", value: { ttlMs } };
    // Extended, but too late to count on: give it up everywhere, as a failed acquire does.
    if (extended) this.unlockAll(key, hold.owner);
    if (await mayStillHold(calls, nodes.size, nodes.quorum, ["extend"]))
      throw new RedlockUnknown("timeout", `renew ${key}: too few answers to tell whether a majority extended ${hold.owner}`);
    return { type: "fail", error: failReason(calls, nodes.quorum, "extend", "not-owner") };
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const { nodes, opts } = this;
    await nodes.ready();
    const calls = nodes.begin();
    for (let i = 0; i < nodes.size; i++) nodes.eval(i, RELEASE, [key], [hold.owner]);
    await waitFor(calls, perNodeWait(opts, hold.ttlMs));
    return { type: "ok", value: await releaseOutcome(calls) };
  }

  async close(): Promise<void> {
    this.nodes.close();
  }
}
