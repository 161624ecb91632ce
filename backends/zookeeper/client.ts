// ZooKeeper's lock recipe (docs/backends.md, ZooKeeper), in two forms.
//
// `zookeeper`, the recipe done right: each logical client has a session (its
// timeout is --ttl, as the server grants it); an acquire creates an ephemeral
// sequential node under /fencecheck/locks/<key> whose name carries the session id
// and the hold's owner (Curator's protection mode), so a create whose reply was
// lost (ZOOKEEPER-1262) is found again among the children instead of being made a
// second time. The lowest node holds; each waiter watches the node just below its
// own, and reads the children again when it goes. The fence is the lock node's
// czxid: zxids only grow, and no two nodes share one. Release deletes the hold's
// own node. A session that expires takes its nodes with it: the client knows it
// (the server says so when it reconnects), renews then fail, the workload stops
// writing, and the release answers `released: false` with `lost`.
//
// `zookeeper-naive`, the same recipe as it is often written, without protection
// mode and without a look at its session after a reconnect: a create that got no
// reply is sent again (the first node, if it was made, stays queued under the
// same session: a ghost that holds the lock while nobody knows it), and when its
// session expires it opens a new one and goes on as if its holds were still held,
// its renew a mere "am I connected?" (the double holders of CURATOR-206 and 604).
//
// Cancellation (an AbortSignal) withdraws a waiter: its nodes are deleted, and
// once ZooKeeper confirms (or has none) the acquire fails "cancelled", naming the
// owner its node was made for. A delete with no answer leaves the outcome unknown
// ("cancel-unknown"): the node may still be queued, under a session the client
// then ends, so others wait behind it until the server ends that session too.
//
// `zookeeper-cancel-naive`, kept on purpose: the recipe done right, except that a
// cancelled waiter answers "cancelled" at once, without deleting its node or
// looking whether its turn had come. The node stays queued under a session that
// lives on: when the nodes before it go it holds the lock for nobody, and every
// waiter after it waits behind it (the checker's grant-after-cancel).
//
// The shared lock (backends/zookeeper/rw.ts) is this recipe with `read-` and
// `write-` nodes; which nodes one waits for is backends/zookeeper/queue.ts's rule.
//
// The ok value reports `queued_ms`, as etcd-queue does: when the node that took
// the hold's place was certainly created (the create's reply, or the child list
// that found it again), for the fairness analysis.
import zookeeper from "node-zookeeper-client";
import { CANCELLED, CANCEL_UNKNOWN, UnknownOutcome, type AcquireRequest, type ClientContext, type Hold, type LockClient, type Outcome } from "../../clients/lock.ts";
import { ORPHAN_NODE_ERROR } from "../../store/events.ts";
import { ZkCallError, ZkSession, isZk, zxid } from "./session.ts";
import { ahead, inQueueOrder, type NodeKind } from "./queue.ts";

const { CreateMode } = zookeeper;

import { ZK_LOCK_ROOT as LOCK_ROOT } from "./places.ts";

export { LOCK_ROOT };

interface ZkHold {
  dir: string;
  /** This hold's nodes (one, unless a create sent twice made two). */
  nodes: string[];
  session: ZkSession;
}

export class ZkLock implements LockClient {
  private session: ZkSession | null = null;
  private readonly held = new Map<string, ZkHold>();
  private readonly dirs = new Set<string>();
  private holds = 0;

  constructor(
    private readonly ctx: ClientContext,
    /** No protection mode, no session check after a reconnect. */
    private readonly naive = false,
    /** Kept on purpose (zookeeper-cancel-naive): a cancelled waiter says "cancelled" and leaves its node queued. */
    private readonly cancelKeepsNode = false,
  ) {}

  /** What an acquire's node asks for: the mutex's is always `lock` (the shared lock says read or write). */
  protected kindOf(_request: AcquireRequest | undefined): NodeKind {
    return "lock";
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number, request?: AcquireRequest): Promise<Outcome<Hold>> {
    const owner = `${this.ctx.ownerPrefix}-h${++this.holds}`;
    const began = performance.now();
    const deadline = Date.now() + timeoutMs;
    const s = await this.live(ttlMs);
    const dir = `${LOCK_ROOT}/${key}`;
    if (!this.dirs.has(dir)) {
      // Persistent and idempotent: a failure here leaves nothing of this hold behind.
      // One look first: mkdirp costs a request per level.
      const made = (await s.exists(dir).catch(() => null)) !== null || (await s.call<string>((done) => s.client.mkdirp(dir, done)).then(() => true, () => false));
      if (!made) throw new ZkCallError("conn-refused", `could not create ${dir}`);
      this.dirs.add(dir);
    }
    const kind = this.kindOf(request);
    const prefix = this.naive ? `${kind}-` : `_c_${s.id}-${owner}-${kind}-`;
    let path: string;
    try {
      path = await this.create(s, dir, prefix, owner, deadline);
    } catch (err) {
      if (err instanceof ZkCallError && err.code === "session-expired") return { type: "fail", error: "session-expired" };
      throw this.abandon(s, err);
    }
    const queuedMs = Math.ceil((performance.now() - began) * 1000) / 1000;
    const created = path.slice(dir.length + 1);
    // Our nodes: with protection mode every child with our prefix is this hold's (a
    // create that was sent twice may have made two); without, the one we know of.
    const ours = (children: string[]): string[] => (this.naive ? children.filter((c) => c === created) : children.filter((c) => c.startsWith(prefix)));
    // The owner of the node we last waited for (its data), a queue fact for the checker.
    let behind: { behind: string } | undefined;
    const signal = request?.signal;
    try {
      for (;;) {
        if (signal?.aborted) return await this.withdraw(s, dir, [created], owner, behind, this.naive ? undefined : prefix);
        const children = inQueueOrder(await s.call<string[]>((done) => s.client.getChildren(dir, done)));
        const mine = ours(children)[0];
        // Our node is gone: only the end of our session deletes it.
        if (mine === undefined) return { type: "fail", error: "session-expired" };
        const waitFor = ahead(children, mine);
        if (waitFor.length === 0) {
          const stat = await s.exists(`${dir}/${mine}`);
          if (!stat) return { type: "fail", error: "session-expired" };
          this.held.set(owner, { dir, nodes: ours(children), session: s });
          return { type: "ok", value: { owner, fence: zxid(stat.czxid), ttlMs: s.timeoutMs, extra: { queued_ms: queuedMs, session: s.id, node: mine, ...behind } } };
        }
        if (Date.now() >= deadline) {
          const error = await this.whyWaited(s, dir, waitFor[0], timeoutMs);
          await this.leave(s, dir, ours(children));
          return behind ? { type: "fail", error, value: behind } : { type: "fail", error };
        }
        const watched = await this.waitGone(s, `${dir}/${waitFor[waitFor.length - 1]}`, deadline, signal);
        if (watched !== null) behind = { behind: watched };
      }
    } catch (err) {
      if (err instanceof UnknownOutcome) throw err;
      if (err instanceof ZkCallError && err.code === "session-expired") return { type: "fail", error: "session-expired" };
      // Our node may still be queued (or first): leave the queue, or say we cannot know.
      // A cancel that came before or while we leave is still a cancel: withdrawn for
      // certain, or cancel-unknown, never the failed read's own error (seen when the
      // link was cut as the abort came, the waiter still listing the queue).
      try {
        await this.leave(s, dir, [created], err, this.naive ? undefined : prefix);
      } catch (left) {
        throw signal?.aborted ? cancelUnknown(left) : left;
      }
      if (signal?.aborted) return cancelled(owner, behind);
      return { type: "fail", error: err instanceof ZkCallError ? err.code : "error" };
    }
  }

  /**
   * A waiter's cancel: leave the queue. Certainly left (the delete confirmed, or
   * the node or its session already gone): fail "cancelled", naming the owner the
   * node was made for. Otherwise unknown: the node may still be queued.
   */
  private async withdraw(s: ZkSession, dir: string, nodes: string[], owner: string, behind: { behind: string } | undefined, prefix?: string): Promise<Outcome<Hold>> {
    // The defect kept on purpose: certain of a withdrawal it never made.
    if (this.cancelKeepsNode) return cancelled(owner, behind);
    try {
      await this.leave(s, dir, nodes, undefined, prefix);
    } catch (err) {
      throw cancelUnknown(err);
    }
    return cancelled(owner, behind);
  }

  /**
   * Create our node, sending the create again after a lost reply until
   * `deadline` (then the outcome is unknown: a throw). With protection mode a
   * create without a reply is first followed by a look at the children for our
   * prefix (the session id and owner): found, it is ours; not found, it is sent
   * again, and should the first still arrive, its node carries the same prefix and
   * is this hold's too (released with it). Without, it is simply sent again, and a
   * first node that was made stays behind, queued under our session.
   */
  private async create(s: ZkSession, dir: string, prefix: string, owner: string, deadline: number): Promise<string> {
    for (;;) {
      try {
        return await s.call<string>((done) => s.client.create(`${dir}/${prefix}`, Buffer.from(owner), CreateMode.EPHEMERAL_SEQUENTIAL, done));
      } catch (err) {
        if (!(err instanceof ZkCallError) || err.code === "session-expired" || Date.now() >= deadline) throw err;
        if (this.naive) continue;
        const found = await this.findOwn(s, dir, prefix, deadline);
        if (found) return found;
      }
    }
  }

  /** Our node among the children, or null if there is none; looked for again while the connection comes back, until `deadline`. */
  private async findOwn(s: ZkSession, dir: string, prefix: string, deadline: number): Promise<string | null> {
    for (;;) {
      await s.settle();
      try {
        const found = (await s.call<string[]>((done) => s.client.getChildren(dir, done))).find((c) => c.startsWith(prefix));
        return found ? `${dir}/${found}` : null;
      } catch (err) {
        if (!(err instanceof ZkCallError) || err.code === "session-expired" || Date.now() >= deadline) throw err;
      }
    }
  }

  /**
   * Why an acquire that waited in vain failed: "timeout" (or "busy"), or, when the
   * node that held the lock belongs to our own session although it is none of this
   * hold's, "orphan-node": a node of ours that we lost track of (a create whose
   * reply was lost, sent again without protection mode) holds the lock for nobody,
   * and will until our session ends. A fact for the history (the checker's
   * orphan-lock-node); the recipe with protection mode never meets it.
   */
  private async whyWaited(s: ZkSession, dir: string, holder: string, timeoutMs: number): Promise<string> {
    const stat = await s.exists(`${dir}/${holder}`).catch(() => null);
    if (stat && stat.ephemeralOwner.toString("hex") === s.id) return ORPHAN_NODE_ERROR;
    return timeoutMs > 0 ? "timeout" : "busy";
  }

  /**
   * Until the node is deleted (its watch fires) or is already gone, at most until
   * the deadline and a session timeout, or until `signal` aborts. The node's data
   * (its owner), or null if it was gone already.
   */
  private async waitGone(s: ZkSession, path: string, deadline: number, signal?: AbortSignal): Promise<string | null> {
    let wake: () => void = () => {};
    const woken = new Promise<void>((r) => (wake = r));
    const data = await s.data(path, () => wake());
    if (data === null) return null;
    // Read again at least once a session timeout even if the watch says nothing:
    // a watch set on a server that lost its quorum stays silent.
    const waitMs = Math.max(0, Math.min(deadline - Date.now(), s.timeoutMs));
    let timer: NodeJS.Timeout | undefined;
    signal?.addEventListener("abort", wake, { once: true });
    // An abort that came while the node was read (or the children listed) has
    // been dispatched already, to no listener: without this the wait went on to
    // the session timeout (a cancel answered 4 s late in a fresh-clone run).
    if (signal?.aborted) wake();
    await Promise.race([woken, new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
    signal?.removeEventListener("abort", wake);
    return data.toString();
  }

  /**
   * Leave the queue: delete our nodes (gone already is as good). If a delete is
   * not confirmed a node may still be queued: the session is ended (its nodes go
   * with it, at the latest when it expires) and the outcome is unknown, thrown
   * (`cause`, the failure that made us leave, if there was one).
   */
  private async leave(s: ZkSession, dir: string, nodes: string[], cause?: unknown, prefix?: string): Promise<void> {
    try {
      // With protection mode, every node of ours goes, a late duplicate included.
      const all = prefix ? [...new Set([...nodes, ...(await s.call<string[]>((done) => s.client.getChildren(dir, done))).filter((c) => c.startsWith(prefix))])] : nodes;
      await this.remove(s, dir, all);
    } catch (err) {
      if (!(err instanceof ZkCallError && err.code === "session-expired")) throw this.abandon(s, cause ?? err);
    }
  }

  /**
   * Delete nodes of `dir`; true when at least one was still there. A delete whose
   * reply was lost is sent again once the session is back (deleting our own node
   * twice is harmless: the second finds none); a session that expired meanwhile
   * took the nodes with it.
   */
  private async remove(s: ZkSession, dir: string, nodes: string[]): Promise<boolean> {
    let any = false;
    for (const n of nodes) {
      for (let tries = 1; ; tries++) {
        try {
          await s.call<void>((done) => s.client.remove(`${dir}/${n}`, -1, (err) => done(err, undefined)));
          any = true;
          break;
        } catch (err) {
          // Gone on a second try, with the session alive: the first delete did it (only we, or the session's end, delete our nodes).
          if (isZk(err, "NO_NODE")) {
            any ||= tries > 1;
            break;
          }
          if (!(err instanceof ZkCallError && err.code === "conn-lost")) throw err;
          const state = await s.settle();
          if (state === "expired") throw new ZkCallError("session-expired", "the session expired while a delete was unanswered");
          if (state !== "connected" || tries >= 3) throw err;
        }
      }
    }
    return any;
  }

  /** Give up on a session whose nodes we no longer know: ending it takes them away. */
  private abandon(s: ZkSession, err: unknown): unknown {
    if (!this.naive) s.close();
    return err;
  }

  /** The session to use: the current one, or (none yet, or it ended) a new one. */
  private async live(ttlMs: number): Promise<ZkSession> {
    if (!this.session?.alive) this.session = await ZkSession.open(this.ctx.endpoints, ttlMs, this.ctx.commandTimeoutMs);
    return this.session;
  }

  async renew(_key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const h = this.held.get(hold.owner);
    if (!h) return { type: "fail", error: "not-owner" };
    if (this.naive) {
      // Connected is all it asks: a new session after an expiry says yes too.
      const s = await this.live(ttlMs);
      await s.exists("/");
      return { type: "ok", value: { ttlMs: s.timeoutMs } };
    }
    if (h.session.state === "expired") return { type: "fail", error: "session-expired" };
    // A node of ours still there: the session that owns it is alive, so the hold is.
    const stat = await h.session.exists(`${h.dir}/${h.nodes[0]}`);
    if (!stat) return { type: "fail", error: "not-owner" };
    return { type: "ok", value: { ttlMs: h.session.timeoutMs } };
  }

  async release(_key: string, hold: Hold): Promise<Outcome<{ released: boolean; lost?: string }>> {
    const h = this.held.get(hold.owner);
    if (!h) return { type: "ok", value: { released: false } };
    this.held.delete(hold.owner);
    const expired = { type: "ok", value: { released: false, lost: "session-expired" } } as const;
    // The server deleted our nodes when it expired the session, before telling us.
    if (!this.naive && h.session.state === "expired") return expired;
    const s = this.naive ? await this.live(hold.ttlMs) : h.session;
    try {
      return { type: "ok", value: { released: await this.remove(s, h.dir, h.nodes) } };
    } catch (err) {
      if (!this.naive && err instanceof ZkCallError && err.code === "session-expired") return expired;
      throw this.abandon(s, err);
    }
  }

  lost(hold: Hold): string | null {
    if (this.naive) return null;
    const h = this.held.get(hold.owner);
    return h && h.session.state === "expired" ? "session-expired" : null;
  }

  async close(): Promise<void> {
    this.session?.close();
  }
}

/** A cancelled waiter, certainly gone from the queue: its owner, and whom it waited behind. */
function cancelled(owner: string, behind: { behind: string } | undefined): Outcome<Hold> {
  return { type: "fail", error: CANCELLED, value: { owner, ...behind } };
}

/** A cancelled waiter whose node may still be queued: the delete (or the look for it) got no answer. */
function cancelUnknown(err: unknown): UnknownOutcome {
  return new UnknownOutcome(CANCEL_UNKNOWN, `the delete of a cancelled waiter's node got no answer: ${String((err as Error)?.message ?? err)}`);
}
