// simple-redis-mutex 3.0.0 on one Redis, used as its README says: `lock(redis,
// name, { timeout, failAfter })` over a node-redis client (one per process, as it
// asks: its pub/sub waiting is module-wide), the release function it returns,
// `release.refreshTimeout()`, and `release.fencingToken` as the hold's fence. Its
// polling interval stays at the default 10 s: a waiter learns of a release by
// pub/sub, and of a lease that merely expired only by polling.
//
// Its functions say nothing of what happened (a release or refresh returns
// nothing, a failed `lock` only rejects after `failAfter`), so the client it is
// given is a recorder in front of the real one, and each outcome is judged from
// the commands the library sent and their answers, never from its word:
// - a `lock` that rejects is a `fail` only if none of its SETs may have taken:
//   one still unanswered, or one answered OK whose INCR then failed, leaves the
//   key held by a value nobody knows until its TTL (an `info`);
// - a release or refresh is known to have touched our key only if its answer
//   came while our lease was certainly alive (its last SET or PEXPIRE sent, plus
//   TTL, less drift): its refresh is GET then PEXPIRE, so a PEXPIRE after our
//   lease ran out may extend the next holder's key; later than that it is unknown.
//
// Its fence is an INCR of one counter for every lock, in a round trip after the
// SET: increasing, but a holder held up between the two gets a fence higher than
// the holder after it.
import { createClient, ErrorReply } from "redis";
import { lock, tryLock, type ReleaseFunc } from "simple-redis-mutex";
import type { LockAdapter } from "../../clients/adapter.ts";
import type { ClientContext, Endpoint, Hold, LockClient, Outcome } from "../../clients/lock.ts";
import { sleep } from "../../lib/index.ts";
import { clockDrift } from "../../clients/majority.ts";

type NodeRedis = ReturnType<typeof createClient>;

/** The library's parameter type, which node-redis' own client type does not quite meet. */
type LibraryRedis = Parameters<typeof lock>[0];

/** One command the library sent through the recorder, with its answer when it comes. */
interface Sent {
  command: string;
  args: unknown[];
  /** Date.now() just before it left. */
  sent: number;
  /** Date.now() when its answer (or error) came; null until then. */
  answered: number | null;
  reply?: unknown;
  error?: unknown;
  /** Resolves once answered; never rejects. */
  done?: Promise<void>;
}

/** The outcome is unknown: thrown so the workload records `info` with this code. */
const unknown = (code: string, message: string): Error => Object.assign(new Error(message), { code });

/** The commands whose answers say what the library did. */
const RECORDED = new Set(["set", "incr", "get", "pExpire", "evalSha", "eval", "duplicate"]);

interface Connection {
  redis: NodeRedis;
  ready: Promise<unknown>;
  users: number;
  /** The subscribers the library made from it (its duplicate() calls). */
  subscribers: NodeRedis[];
}

/** The node-redis client of this process for one server, shared by its lock clients as the README asks. */
const shared = new Map<string, Connection>();

function connection(e: Endpoint): Connection {
  const at = `${e.host}:${e.port}`;
  let c = shared.get(at);
  if (!c) {
    const redis = createClient({ socket: { host: e.host, port: e.port } });
    // Errors surface on the commands that meet them; without a listener the event would crash the worker.
    redis.on("error", () => {});
    const ready = redis.connect();
    // Awaited by the first acquire, which a failure then fails; unawaited it must not crash the worker.
    ready.catch(() => {});
    c = { redis, ready, users: 0, subscribers: [] };
    shared.set(at, c);
  }
  c.users++;
  return c;
}

async function letGo(e: Endpoint, c: Connection): Promise<void> {
  if (--c.users > 0) return;
  shared.delete(`${e.host}:${e.port}`);
  if (c.redis.isOpen) c.redis.destroy();
  // Its 'end' makes the library unsubscribe and close its subscriber, without
  // waiting or catching: wait for that, or a server stopped next fails it mid-way.
  for (let waited = 0; waited < 1000 && c.subscribers.some((s) => s.isOpen); waited += 20) await sleep(20);
}

/**
 * Whether a `lock` that gave up may still have set its key. Its `failAfter` does
 * not stop an attempt under way: a SET unanswered then, or one whose attempt was
 * still making its subscriber (a duplicate() with no SET after it), may take
 * later. Pending SETs get the command timeout to answer before we judge.
 */
async function maybeSet(calls: readonly Sent[], waitMs: number): Promise<boolean> {
  const sets = calls.filter((c) => c.command === "set");
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(sets.map((c) => c.done)), new Promise((r) => (timer = setTimeout(r, waitMs)))]);
  clearTimeout(timer);
  const order = calls.map((c) => c.command);
  if (order.lastIndexOf("duplicate") > order.lastIndexOf("set")) return true;
  return sets.some((c) => c.answered === null || c.reply === "OK" || (c.error !== undefined && !(c.error instanceof ErrorReply)));
}

interface Held {
  release: ReleaseFunc;
  /** Date.now() until which our key is certainly still ours (unless released). */
  validUntil: number;
}

class SimpleRedisMutex implements LockClient {
  private readonly conn: Connection;
  private readonly recorder: LibraryRedis;
  private log: Sent[] = [];
  private readonly held = new Map<string, Held>();
  private holds = 0;
  private closed = false;

  constructor(private readonly ctx: ClientContext) {
    this.conn = connection(ctx.endpoints[0]);
    this.recorder = new Proxy(this.conn.redis, {
      get: (target, prop) => {
        const v = Reflect.get(target, prop, target) as unknown;
        if (typeof v !== "function") return v;
        const f = (v as (...a: unknown[]) => unknown).bind(target);
        if (typeof prop !== "string" || !RECORDED.has(prop)) return f;
        return (...args: unknown[]) => this.record(prop, args, f);
      },
    }) as unknown as LibraryRedis;
  }

  private record(command: string, args: unknown[], f: (...a: unknown[]) => unknown): unknown {
    const s: Sent = { command, args, sent: Date.now(), answered: null };
    this.log.push(s);
    // duplicate() makes its subscriber at once; the order it came in matters, and closing waits for it.
    if (command === "duplicate") {
      const subscriber = f(...args) as NodeRedis;
      this.conn.subscribers.push(subscriber);
      return subscriber;
    }
    let reply: Promise<unknown>;
    try {
      reply = Promise.resolve(f(...args));
    } catch (e) {
      reply = Promise.reject(e);
    }
    s.done = reply.then(
      (r) => void ((s.answered = Date.now()), (s.reply = r)),
      (e: unknown) => void ((s.answered = Date.now()), (s.error = e)),
    );
    return reply;
  }

  /** Starts a fresh record: the commands of one operation. */
  private begin(): Sent[] {
    this.log = [];
    return this.log;
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    await this.conn.ready;
    const calls = this.begin();
    let release: ReleaseFunc;
    try {
      // Its README: tryLock when not waiting, lock (blocking, failAfter) when waiting.
      if (timeoutMs <= 0) {
        const [has, r] = await tryLock(this.recorder, key, { timeout: ttlMs });
        if (!has) return { type: "fail", error: "busy" };
        release = r;
      } else {
        release = await lock(this.recorder, key, { timeout: ttlMs, failAfter: timeoutMs });
      }
    } catch (e) {
      if (await maybeSet(calls, this.ctx.commandTimeoutMs))
        throw unknown("maybe-held", `acquire ${key}: simple-redis-mutex gave up (${(e as Error).message}) with a SET that may take: the key may be held by no one until its TTL`);
      return { type: "fail", error: /could not be acquired/.test((e as Error).message) ? "timeout" : "unavailable" };
    }
    const granted = calls.filter((c) => c.command === "set" && c.reply === "OK").at(-1);
    if (!granted) throw new Error(`acquire ${key}: simple-redis-mutex returned a lock with no SET of ours answered OK`);
    const owner = `${this.ctx.ownerPrefix}-h${++this.holds}`;
    this.held.set(owner, { release, validUntil: granted.sent + ttlMs - clockDrift(ttlMs) });
    return { type: "ok", value: { owner, fence: release.fencingToken, ttlMs } };
  }

  /** Its refresh resets the TTL it was locked with (it takes none): GET, and PEXPIRE if the value is still ours. */
  async renew(key: string, hold: Hold, _ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const h = this.held.get(hold.owner);
    if (!h) return { type: "fail", error: "not-owner" };
    const calls = this.begin();
    await h.release.refreshTimeout();
    const px = calls.find((c) => c.command === "pExpire");
    // No PEXPIRE: its GET found another value (or none), and it counts itself released.
    if (!px || Number(px.reply) === 0) return { type: "fail", error: "not-owner" };
    if (px.answered! > h.validUntil)
      throw unknown("maybe-expired", `renew ${key}: its PEXPIRE came after our lease may have run out; it may have extended the next holder's key`);
    h.validUntil = px.sent + hold.ttlMs - clockDrift(hold.ttlMs);
    return { type: "ok", value: { ttlMs: hold.ttlMs } };
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const h = this.held.get(hold.owner);
    if (!h) return { type: "ok", value: { released: false } };
    this.held.delete(hold.owner);
    const calls = this.begin();
    await h.release();
    const script = calls.filter((c) => (c.command === "evalSha" || c.command === "eval") && c.error === undefined).at(-1);
    // Nothing sent: a refresh had found the key gone, and it counts itself released.
    if (!script) return { type: "ok", value: { released: false } };
    // Its script deletes our value and returns nothing either way; only timing tells.
    if (script.answered! <= h.validUntil) return { type: "ok", value: { released: true } };
    throw unknown("maybe-expired", `release ${key}: its script says nothing of what it deleted, and it ran after our lease may have run out`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await letGo(this.ctx.endpoints[0], this.conn);
  }
}

/** An adapter but for its one-line description, which the registry (index.ts) holds. */
export const simpleRedisMutex: Omit<LockAdapter, "describe"> = {
  backends: ["redis"],
  fences: true,
  create: (ctx) => new SimpleRedisMutex(ctx),
};
