// One logical client's lock, run by an adapter program of any language that speaks
// the adapter protocol (docs/adapter-protocol.md) on its standard input and
// output. The program is this worker's child, in its process group, so the pause
// nemesis freezes the program that runs the lock library together with its client.
//
// The program's word is taken for what it did (ok, fail) and for what it cannot
// know (error: info). When it breaks the protocol (a line that is no message, an
// exit, no answer in time) it is killed, the operation is unknown (info, with an
// `adapter-...` error and a message in the worker's log), and the next operation
// starts a new program, under a new owner prefix. A broken protocol (not a
// timeout) is also told to the run (ctx.protocolError), even when no operation
// was outstanding: a program that says things it should not cannot be trusted for
// what it did say, so such a run is never VALID.
//
// One request is outstanding at a time, but for a cancel: when an acquire's
// AbortSignal fires while it waits, a cancel naming it is sent at once, and the
// acquire's own reply still says how it ended (the program reads its input while
// it is blocked in the lock call).
import { spawn, type ChildProcess } from "node:child_process";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { CANCELLED, UnknownOutcome, type AcquireRequest, type ClientContext, type Hold, type LockClient, type Outcome } from "../lock.ts";
import { clip } from "../../lib/text.ts";
import { markedEnv, markerOf } from "../../lib/owner.ts";
import type { ProgramSpec } from "./manifest.ts";
import type { ProtocolErrorCode } from "../../store/protocol-errors.ts";
import { programEnvironment } from "./environment.ts";
import { acquireOkProblem, PROTOCOL_VERSION, readLine, releaseOkProblem, renewOkProblem, sameKinds, type NoticeMessage, type Reply, type Request, type RequestBody } from "./messages.ts";

/** A program's first answer may wait for a runtime to start (a JVM, a Python that imports grpc). */
export const INIT_TIMEOUT_MS = 30_000;
/** How long a closed program has to exit before it is killed. */
const EXIT_GRACE_MS = 1000;
/** A deadline timer this late fired after the worker was frozen (SIGSTOP): the program was frozen too, and gets this long more. */
const FROZEN_LATE_MS = 250;
const THAWED_GRACE_MS = 1000;
/** Lines of the program's standard error quoted when it is killed. */
const STDERR_TAIL = 8;

/** Why a program was killed: the operation is recorded as info with this error. All but the timeout broke the protocol. */
export type AdapterFailureCode = ProtocolErrorCode | "adapter-timeout";

export class AdapterFailure extends UnknownOutcome {
  constructor(readonly code: AdapterFailureCode, message: string) {
    super(code, message);
  }
}

interface Pending {
  id: number;
  type: Request["type"];
  resolve(reply: Reply): void;
  reject(err: Error): void;
  cancel(): void;
}

/** One program, from its start to its end. */
interface Program {
  child: ChildProcess;
  pid: number;
  ownerPrefix: string;
  /**
   * The requests awaiting replies, by id: one at a time, except a cancel, which is
   * sent while the acquire it withdraws is outstanding.
   */
  pending: Map<number, Pending>;
  /** Set once it is killed or gone: nothing more is read from it. */
  ended: boolean;
  /** Sent close: its exit is expected. */
  closing: boolean;
  stderrTail: string[];
  /** Resolves once it has answered init. */
  initialised: Promise<void>;
}

export class ProgramClient implements LockClient {
  readonly renews: boolean;
  private program: Program | null = null;
  private starts = 0;
  private nextId = 1;
  /** Holds of the current program, owner to key, for notices that name a key or nothing. */
  private readonly held = new Map<string, { key: string; entries: number }>();
  /** Owners a `lost` notice named. */
  private readonly toldLost_ = new Set<string>();

  constructor(private readonly spec: ProgramSpec, private readonly ctx: ClientContext) {
    this.renews = spec.renew === "explicit";
  }

  async whenStarted(): Promise<void> {
    await this.running();
  }

  async acquire(key: string, ttlMs: number, waitMs: number, request: AcquireRequest = {}): Promise<Outcome<Hold>> {
    const p = await this.running();
    const { signal, mode, reenter, permits } = request;
    // Withdrawn before it was sent: nothing was ever queued.
    if (signal?.aborted) return { type: "fail", error: CANCELLED };
    const body: RequestBody = {
      type: "acquire",
      key,
      ttl_ms: ttlMs,
      wait_ms: waitMs,
      ...(mode ? { mode } : {}),
      ...(reenter ? { reenter: reenter.owner } : {}),
      ...(permits !== undefined ? { permits } : {}),
    };
    const sent = this.send(p, body, waitMs + 2 * this.ctx.commandTimeoutMs);
    const reply = await this.cancellable(p, sent, signal);
    return this.outcome(p, reply, (fields) => {
      const problem = acquireOkProblem(fields, this.spec.fences, reenter?.owner);
      if (problem) throw this.kill(p, "adapter-bad-line", `answered acquire ${JSON.stringify(key)} with ${clip(JSON.stringify(fields))}: ${problem}`);
      const { owner, fence, ttl_ms: granted, ...extra } = fields;
      // A re-entry is the same hold once more: it is held until each entry is released.
      const entered = this.held.get(owner as string);
      this.held.set(owner as string, { key, entries: (entered?.entries ?? 0) + 1 });
      const hold: Hold = { owner: owner as string, fence: fence as number | null, ttlMs: typeof granted === "number" ? granted : ttlMs };
      if (Object.keys(extra).length > 0) hold.extra = extra;
      return hold;
    });
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const p = await this.running();
    const reply = await this.request(p, { type: "renew", key, owner: hold.owner, fence: hold.fence, ttl_ms: ttlMs }, 2 * this.ctx.commandTimeoutMs);
    return this.outcome(p, reply, (fields) => {
      const problem = renewOkProblem(fields);
      if (problem) throw this.kill(p, "adapter-bad-line", `answered renew with ${clip(JSON.stringify(fields))}: ${problem}`);
      return { ttlMs: typeof fields.ttl_ms === "number" ? fields.ttl_ms : ttlMs };
    });
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean; lost?: string }>> {
    const p = await this.running();
    const reply = await this.request(p, { type: "release", key, owner: hold.owner, fence: hold.fence }, 2 * this.ctx.commandTimeoutMs);
    const out = this.outcome(p, reply, (fields) => {
      const problem = releaseOkProblem(fields);
      if (problem) throw this.kill(p, "adapter-bad-line", `answered release with ${clip(JSON.stringify(fields))}: ${problem}`);
      return { released: fields.released !== false, ...(typeof fields.lost === "string" ? { lost: fields.lost } : {}) };
    });
    const entered = this.held.get(hold.owner);
    if (entered && entered.entries > 1) entered.entries--;
    else this.held.delete(hold.owner);
    return out;
  }

  lost(hold: Hold): string | null {
    return this.toldLost_.has(hold.owner) ? "lost-notice" : null;
  }

  toldLost(hold: Hold): boolean {
    return this.toldLost_.has(hold.owner);
  }

  async close(): Promise<void> {
    const p = this.program;
    this.program = null;
    if (!p || p.ended) return;
    const exited = new Promise<void>((resolve) => (p.child.exitCode !== null || p.child.signalCode !== null ? resolve() : p.child.once("exit", () => resolve())));
    try {
      await p.initialised;
      p.closing = true;
      await this.request(p, { type: "close" }, 2 * this.ctx.commandTimeoutMs);
    } catch {
      // It is going either way.
    }
    p.child.stdin?.end();
    const timer = setTimeout(() => p.child.kill("SIGKILL"), EXIT_GRACE_MS);
    await exited;
    clearTimeout(timer);
    p.ended = true;
  }

  /** The program to send to: the running one, or a new one (none yet, or the last was killed). */
  private async running(): Promise<Program> {
    if (!this.program || this.program.ended) this.program = this.start();
    const p = this.program;
    await p.initialised;
    return p;
  }

  private start(): Program {
    const [command, ...args] = this.spec.command;
    const ownerPrefix = `${this.ctx.ownerPrefix}a${++this.starts}`;
    this.held.clear();
    // Not detached: the program stays in the worker's process group, which the pause nemesis stops and the reaper kills whole.
    // The run's marker (lib/owner.ts) as this worker was given it, whatever the manifest's env says.
    // Its environment's variables (a venv first on PATH ...) under the manifest's own "env", which may set them otherwise.
    const env = markedEnv({ ...process.env, ...programEnvironment(this.spec.path, this.spec.environment), ...this.spec.env }, markerOf(process.env) ?? undefined);
    const child = spawn(command, args, { cwd: this.spec.cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    const p: Program = { child, pid: child.pid ?? 0, ownerPrefix, pending: new Map(), ended: false, closing: false, stderrTail: [], initialised: Promise.resolve() };
    child.stdin!.on("error", () => {});
    child.on("error", (err) => this.kill(p, "adapter-exited", `could not be started: ${err.message}`));
    createInterface({ input: child.stdout!, crlfDelay: Infinity }).on("line", (line) => this.onLine(p, line));
    createInterface({ input: child.stderr!, crlfDelay: Infinity }).on("line", (line) => {
      // Its own log goes to the worker's, line by line, marked as its.
      this.ctx.log?.(`[adapter client ${this.ctx.id ?? "?"} pid ${p.pid}] ${line}`);
      p.stderrTail.push(line);
      if (p.stderrTail.length > STDERR_TAIL) p.stderrTail.shift();
    });
    // 'close': it has exited and every line it wrote has been read.
    child.on("close", (code, signal) => {
      if (p.ended) return;
      if (p.closing && p.pending.size === 0) p.ended = true;
      else this.kill(p, "adapter-exited", `exited (${signal ?? `code ${code}`})`);
    });
    const init: RequestBody = {
      type: "init",
      protocol: PROTOCOL_VERSION,
      backend: this.ctx.backend ?? this.spec.backends[0],
      endpoints: this.ctx.endpoints.map(({ name, host, port }) => ({ name, host, port })),
      owner_prefix: ownerPrefix,
      ttl_ms: this.ctx.ttlMs ?? 0,
      command_timeout_ms: this.ctx.commandTimeoutMs,
      seed: this.ctx.seed ?? 0,
      client: this.ctx.id ?? 0,
    };
    p.initialised = this.request(p, init, INIT_TIMEOUT_MS).then((reply) => {
      if (reply.type === "error") throw this.kill(p, "adapter-exited", `refused init: ${reply.error}`);
      if (reply.type !== "init_ok") throw this.kill(p, "adapter-bad-line", `answered init with ${reply.type}, not init_ok`);
      const differs = [
        ...(reply.fences !== this.spec.fences ? [`"fences" ${reply.fences}`] : []),
        ...(reply.renew !== this.spec.renew ? [`"renew" ${JSON.stringify(reply.renew)}`] : []),
        // Optional in init_ok (a program older than lock kinds says none); when said, as the manifest says.
        ...(reply.kinds && !sameKinds(reply.kinds, this.spec.kinds) ? [`"kinds" ${JSON.stringify(reply.kinds)}`] : []),
      ];
      if (differs.length) throw this.kill(p, "adapter-bad-line", `answered init with ${differs.join(" and ")}, which its manifest does not say`);
      if (reply.library) this.ctx.log?.(`[adapter client ${this.ctx.id ?? "?"} pid ${p.pid}] library: ${reply.library}`);
    });
    // Awaited by whoever sends next; a failure here must not also surface as an unhandled rejection.
    p.initialised.catch(() => {});
    return p;
  }

  /** Sends one request and waits for its reply, at most `timeoutMs` of time the worker was not frozen. */
  private request(p: Program, body: RequestBody, timeoutMs: number): Promise<Reply> {
    return this.send(p, body, timeoutMs).reply;
  }

  /** Sends one request: its id, and its reply to come. */
  private send(p: Program, body: RequestBody, timeoutMs: number): { id: number; reply: Promise<Reply> } {
    const id = this.nextId++;
    if (p.ended) return { id, reply: Promise.reject(new AdapterFailure("adapter-exited", "the adapter program has ended")) };
    const reply = new Promise<Reply>((resolve, reject) => {
      const cancel = deadline(timeoutMs, () => this.kill(p, "adapter-timeout", `did not answer ${body.type} (id ${id}) within ${timeoutMs} ms`));
      p.pending.set(id, { id, type: body.type, resolve, reject, cancel });
      p.child.stdin!.write(JSON.stringify({ id, ...body }) + "\n");
    });
    return { id, reply };
  }

  /**
   * The acquire's reply; if `signal` aborts before it comes, a cancel is sent for
   * it, and the acquire's own reply still says how it ended (fail "cancelled",
   * error "cancel-unknown", or an ok granted before the cancel took effect).
   * The cancel's reply only says whether the program tried: an error there
   * changes nothing the acquire's reply does not say.
   */
  private async cancellable(p: Program, sent: { id: number; reply: Promise<Reply> }, signal: AbortSignal | undefined): Promise<Reply> {
    if (!signal || !this.spec.kinds.cancel) return sent.reply;
    const onAbort = (): void => {
      if (p.ended || !p.pending.has(sent.id)) return;
      this.send(p, { type: "cancel", acquire: sent.id }, 2 * this.ctx.commandTimeoutMs).reply.then(
        (reply) => {
          if (reply.type === "init_ok") this.kill(p, "adapter-bad-line", `answered cancel with init_ok`);
          else if (reply.type !== "ok") this.ctx.log?.(`[adapter client ${this.ctx.id ?? "?"} pid ${p.pid}] cancel of acquire id ${sent.id}: ${reply.type} ${reply.error}`);
        },
        // A kill fails the acquire too, which says so.
        () => {},
      );
    };
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      return await sent.reply;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  private onLine(p: Program, text: string): void {
    if (p.ended) return;
    const line = readLine(text);
    if (line.kind === "bad") {
      this.kill(p, "adapter-bad-line", `wrote a line that is not a message of the protocol (${line.why}): ${clip(text)}`);
      return;
    }
    if (line.kind === "notice") {
      this.onNotice(line.notice);
      return;
    }
    const pending = p.pending.get(line.inReplyTo);
    if (!pending) {
      const outstanding = [...p.pending.values()].map((q) => `${q.type} id ${q.id}`).join(" and ");
      this.kill(p, "adapter-bad-line", `wrote a reply to id ${line.inReplyTo}, but ${outstanding ? `the request outstanding is ${outstanding}` : "no request is outstanding"}: ${clip(text)}`);
      return;
    }
    p.pending.delete(line.inReplyTo);
    pending.cancel();
    pending.resolve(line.reply);
  }

  private onNotice(n: NoticeMessage): void {
    this.ctx.notice?.(n.f, n.key, n.owner ?? null);
    if (n.f !== "lost") return;
    // A notice that names no hold takes every hold of the program on its key (or every one).
    const owners = n.owner !== undefined ? [n.owner] : [...this.held].filter(([, { key }]) => n.key === undefined || key === n.key).map(([owner]) => owner);
    for (const owner of owners) this.toldLost_.add(owner);
  }

  /** The reply as an outcome: ok made by `ok`, fail as it is, error thrown as an unknown outcome. */
  private outcome<T>(p: Program, reply: Reply, ok: (fields: Record<string, unknown>) => T): Outcome<T> {
    if (reply.type === "ok") return { type: "ok", value: ok(reply.fields) };
    if (reply.type === "fail") return Object.keys(reply.fields).length ? { type: "fail", error: reply.error, value: reply.fields } : { type: "fail", error: reply.error };
    if (reply.type === "error") throw new UnknownOutcome(reply.error);
    throw this.kill(p, "adapter-bad-line", `answered a request with init_ok`);
  }

  /**
   * Ends the program for good: SIGKILL, a message naming it, the line and its
   * standard error's last lines in the worker's log, and the request outstanding
   * failed with it; a broken protocol (not a timeout) is told to the run, which
   * records it even when nothing was outstanding. Returns the failure, for a
   * caller that throws it.
   */
  private kill(p: Program, code: AdapterFailureCode, what: string): AdapterFailure {
    const tail = p.stderrTail.length ? `; its standard error ended with:\n    ${p.stderrTail.join("\n    ")}` : "; it wrote nothing to standard error";
    const failure = new AdapterFailure(code, `adapter ${this.spec.path} (client ${this.ctx.id ?? "?"}, pid ${p.pid}) ${what}${p.ended ? "" : "; killed it"}${tail}`);
    if (p.ended) return failure;
    p.ended = true;
    p.child.kill("SIGKILL");
    this.ctx.log?.(`fencecheck: ${failure.message}`);
    this.ctx.warn?.(failure.message);
    const pending = [...p.pending.values()];
    p.pending.clear();
    for (const q of pending) {
      q.cancel();
      q.reject(failure);
    }
    if (this.program === p) this.program = null;
    if (code !== "adapter-timeout") this.ctx.protocolError?.({ code, pid: p.pid, message: failure.message });
    return failure;
  }
}

/**
 * Calls `onTimeout` after `ms`, unless cancelled. A timer that fires well after
 * it was due fired after the worker was frozen (the pause nemesis stops the
 * worker and its programs together): the program was frozen as long, and has a
 * moment more to answer, since its reply may be just behind the timer.
 */
function deadline(ms: number, onTimeout: () => void): () => void {
  let due = performance.now() + ms;
  let timer: NodeJS.Timeout;
  const arm = (wait: number): void => {
    timer = setTimeout(() => {
      if (performance.now() - due > FROZEN_LATE_MS) {
        due = performance.now() + THAWED_GRACE_MS;
        arm(THAWED_GRACE_MS);
      } else onTimeout();
    }, wait);
  };
  arm(ms);
  return () => clearTimeout(timer);
}
