// The nodes of a Redlock as one client reaches them: one honest connection per
// node, and a record of every call made on each with its answer when it comes.
// Redlock decides on the answers that arrive in time; the record is what lets a
// client say afterwards, honestly, whether a failed attempt may still have left
// its owner on a majority (redlock-proof.ts). The npm redlock packages talk to
// the nodes through `libraryClient`, so their calls are recorded the same way.
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { honestRedis } from "./client.ts";
import type { ClientOptions, Endpoint } from "../../clients/lock.ts";
import type { Rng } from "../../lib/index.ts";

/**
 * What one call did on its node: `yes` it applied (set, extended, deleted),
 * `no` the node answered without applying it, `unsent` it never left this
 * process, `unknown` no answer (timeout, connection lost): it may have applied.
 */
export type Vote = "yes" | "no" | "unsent" | "unknown";

export type CallKind = "grant" | "extend" | "release" | "fence";

export class Call {
  /** null until the answer (or its absence) is known. */
  vote: Vote | null = null;
  /** Resolves with the vote; never rejects. */
  readonly done: Promise<Vote>;

  constructor(
    readonly node: number,
    readonly kind: CallKind,
    readonly owner: string,
    /** The node's connection it went out on: an answer on the same one to a later call proves this one was processed first. */
    readonly conn: number,
    /** The node's reply, or the error; the library clients get exactly this. */
    readonly reply: Promise<unknown>,
    applied: (reply: unknown) => boolean,
  ) {
    this.done = reply.then(
      (r) => (this.vote = applied(r) ? "yes" : "no"),
      (e: unknown) => (this.vote = voteOf(e)),
    );
  }
}

export interface Script {
  kind: CallKind;
  text: string;
  sha: string;
  /** Which ARGV is the owner's value: 0, but the sesame fork passes its db index first. */
  ownerArg: number;
}

export const script = (kind: CallKind, text: string, ownerArg = 0): Script => ({ kind, text, sha: createHash("sha1").update(text).digest("hex"), ownerArg });

type Callback = (err: Error | null, reply?: unknown) => void;

/**
 * The shape the npm redlock packages call: ioredis' evalsha/eval, promise or
 * callback style, or (the sesame fork) ioredis' defineCommand and then the
 * command it defined, `client.acquireLock(n, ...keys, ...args)`.
 */
export interface LibraryClient {
  evalsha(...args: unknown[]): Promise<unknown> | undefined;
  eval(...args: unknown[]): Promise<unknown> | undefined;
  defineCommand(name: string, definition: { lua: string }): void;
  quit(): Promise<unknown>;
}

export function voteOf(err: unknown): Vote {
  const e = err as { name?: unknown; message?: unknown };
  // ioredis refuses at once, without sending, when the connection is down and
  // the offline queue is off.
  if (typeof e?.message === "string" && /stream isn't writeable/i.test(e.message)) return "unsent";
  // An error reply (LOADING after a restart, BUSY, ...): the node answered and did nothing.
  if (e?.name === "ReplyError") return "no";
  return "unknown";
}

export class RedlockNodes {
  readonly size: number;
  readonly quorum: number;
  private readonly redis: Redis[];
  private readonly conns: number[];
  private connecting: Promise<unknown> | null = null;
  private log: Call[] = [];

  constructor(
    readonly endpoints: readonly Endpoint[],
    commandTimeoutMs: number,
  ) {
    this.size = endpoints.length;
    this.quorum = Math.floor(this.size / 2) + 1;
    this.conns = endpoints.map(() => 0);
    this.redis = endpoints.map((e, i) => {
      const r = honestRedis(e, commandTimeoutMs);
      // Errors surface on the calls that meet them; the event would crash the worker.
      r.on("error", () => {});
      r.on("close", () => this.conns[i]++);
      return r;
    });
  }

  name(node: number): string {
    return this.endpoints[node].name;
  }

  /** Connects every node once; later reconnections are ioredis' own (a down node just votes `unsent`). */
  async ready(): Promise<void> {
    this.connecting ??= Promise.allSettled(this.redis.map((r) => r.connect()));
    await this.connecting;
  }

  /** Starts a fresh record: the calls of one attempt. */
  begin(): Call[] {
    this.log = [];
    return this.log;
  }

  /** Sends one command to one node and records it; `applied` reads the reply as yes or no. */
  send(node: number, kind: CallKind, owner: string, command: (r: Redis) => Promise<unknown>, applied: (reply: unknown) => boolean): Call {
    let reply: Promise<unknown>;
    try {
      reply = command(this.redis[node]);
    } catch (e) {
      reply = Promise.reject(e);
    }
    const call = new Call(node, kind, owner, this.conns[node], reply, applied);
    this.log.push(call);
    return call;
  }

  /** Runs a Lua script by its hash, sending the text only if the node does not know it (a restarted node forgets). */
  eval(node: number, s: Script, keys: readonly string[], args: ReadonlyArray<string | number>): Call {
    const owner = String(args[s.ownerArg]);
    return this.send(
      node,
      s.kind,
      owner,
      async (r) => {
        try {
          return await r.evalsha(s.sha, keys.length, ...keys, ...args);
        } catch (e) {
          if (!(e instanceof Error) || !e.message.startsWith("NOSCRIPT")) throw e;
          return r.eval(s.text, keys.length, ...keys, ...args);
        }
      },
      (reply) => Number(reply) === keys.length,
    );
  }

  /**
   * The node as an npm redlock package sees it: its evalsha and eval calls go
   * through `eval` above, so they are recorded. The NOSCRIPT fallback happens
   * here, exactly as the packages would do it themselves, so one library call is
   * one recorded call, as ioredis does for a defined command. `scripts` are the
   * library's own, by hash and by text: a defined command is known by its Lua.
   */
  libraryClient(node: number, scripts: () => readonly Script[]): LibraryClient {
    const call = (...args: unknown[]): Promise<unknown> | undefined => {
      const cb = typeof args[args.length - 1] === "function" ? (args.pop() as Callback) : undefined;
      // redlock 5 passes (sha, n, [keys..., args...]); redlock 4 passes (sha, [n, keys..., args...], cb);
      // a defined command comes here as (lua, n, keys..., args...).
      const [head, n, ...rest] = args.flat() as Array<string | number>;
      const s = scripts().find((x) => x.sha === head || x.text === head);
      const reply = s
        ? this.eval(node, s, rest.slice(0, Number(n)).map(String), rest.slice(Number(n))).reply
        : Promise.reject(new Error(`redlock called a script fencecheck does not know (${String(head).slice(0, 40)})`));
      if (!cb) return reply;
      // What the callback returns is ignored, as ioredis does: redlock 4 returns a
      // promise from it that may reject, and it must not become ours.
      reply.then(
        (r) => void cb(null, r),
        (e: Error) => void cb(e),
      );
      return undefined;
    };
    const client: LibraryClient & Record<string, unknown> = {
      evalsha: call,
      eval: call,
      defineCommand: (name, { lua }) => void (client[name] = (...args: unknown[]) => call(lua, ...args)),
      quit: async () => this.redis[node].quit(),
    };
    return client;
  }

  close(): void {
    for (const r of this.redis) r.disconnect();
  }
}

/**
 * Waits until every call has its answer, or `ms` have passed. On timeout it
 * still lets the event loop read what already arrived before giving up: after a
 * SIGSTOP the timer and the buffered replies are both due, and timers run first.
 * A client paused before reading its replies (K5) must see them.
 */
export function waitFor(calls: readonly Call[], ms: number): Promise<void> {
  const pending = calls.filter((c) => c.vote === null);
  if (pending.length === 0) return Promise.resolve();
  return new Promise((resolve) => {
    let left = pending.length;
    const timer = setTimeout(() => setImmediate(resolve), ms);
    for (const c of pending)
      void c.done.then(() => {
        if (--left === 0) {
          clearTimeout(timer);
          resolve();
        }
      });
  });
}

export const count = (calls: readonly Call[], vote: Vote): number => calls.filter((c) => c.vote === vote).length;

/** What every Redlock client is given (the redlock backend builds it from the ClientContext: backends/redlock/index.ts). */
export interface RedlockClientOptions {
  endpoints: readonly Endpoint[];
  /** Names owners; unique across the run. */
  ownerPrefix: string;
  /** A node that has not answered after this long: its outcome is unknown. */
  commandTimeoutMs: number;
  rng: Rng;
  fenceSource: NonNullable<ClientOptions["fenceSource"]>;
  /** Refuse a quorum that came back after the lease's validity (TTL - elapsed - drift) ran out. Only the project's own client can be told not to. */
  checkValidity: boolean;
  /** How long the project's own client waits for each node (default TTL/10, at least 50 ms). */
  perNodeTimeoutMs?: number;
  /** The project's own client pauses this long between the replies and its decision, once per acquire (K5); 0 or absent: never. */
  pauseAfterRepliesMs?: number;
}

/** How long to wait for one node's answer before going on without it (the Redis documentation's short per-node timeout). */
export const perNodeWait = (o: RedlockClientOptions, ttlMs: number): number =>
  Math.min(o.commandTimeoutMs, o.perNodeTimeoutMs ?? Math.max(50, Math.round(ttlMs / 10)));

/** Between attempts: node-redlock's default delay, 200 +- 100 ms, drawn from the client's seeded stream, never past the deadline. */
export const retryDelay = (rng: Rng, deadline: number): number => Math.max(0, Math.min(rng.between(100, 300), deadline - Date.now()));

