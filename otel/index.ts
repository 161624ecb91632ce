// `import { tracedLock, tracedWrite } from "fencecheck/otel"`: a LockClient (the
// interface of fencecheck/adapter) wrapped so that each acquire, renew and release
// is a span of docs/traces.md's conventions, and a write to the protected
// resource too, through @opentelemetry/api: the spans `fencecheck traces` checks.
// The service's own OpenTelemetry SDK exports them; nothing here starts one.
//
// Each hold's spans share one trace: its acquire's span is their parent (and is
// itself a child of whatever span is active when the acquire starts), so that
// head sampling keeps or drops a hold whole. `thread` names the history process
// the operations belong to: one logical client, which has one lock operation at
// a time (a worker's client number, a request handler's id).
import { context, trace, SpanStatusCode, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";
import type { AcquireRequest, Hold, LockClient, LockKind, Outcome } from "../clients/lock.ts";

export interface TracedOptions {
  /** The tracer to make spans with; by default the global provider's "fencecheck/otel". */
  tracer?: Tracer;
  /** The logical client these operations belong to (the span attribute thread.id). */
  thread: string | number;
  /** The lock's kind (lock.kind), when it is not a mutex. */
  kind?: LockKind;
}

const tracerOf = (opts: TracedOptions): Tracer => opts.tracer ?? trace.getTracer("fencecheck/otel");

/**
 * Ends `span` with the outcome of `run`: ok or fail as lock.outcome (a fail's
 * error as lock.error), and a throw as unknown, with the ERROR status; `done`
 * adds what an ok outcome carries.
 */
async function traced<T>(span: Span, run: () => Promise<Outcome<T>>, done?: (value: T) => Attributes): Promise<Outcome<T>> {
  try {
    const outcome = await run();
    if (outcome.type === "ok") span.setAttributes({ "lock.outcome": "ok", ...done?.(outcome.value) });
    else span.setAttributes({ "lock.outcome": "fail", "lock.error": outcome.error });
    return outcome;
  } catch (err) {
    // The operation may have happened: its outcome is unknown, not failed.
    const code = (err as { code?: unknown })?.code;
    span.setAttributes({ "lock.outcome": "unknown", "lock.error": typeof code === "string" ? code : "error" });
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
    throw err;
  } finally {
    span.end();
  }
}

/**
 * lock.seq: each span's number among its thread's lock spans. A span's start is
 * the wall clock's (Date.now() in the JS SDK), which can step back between two
 * spans of one thread (NTP, a VM's pause, a clock fault); the trace check orders
 * a thread's spans by this number where every one of them has it.
 */
const seqs = new Map<string, number>();
const nextSeq = (thread: string): number => {
  const n = (seqs.get(thread) ?? 0) + 1;
  seqs.set(thread, n);
  return n;
};
const threadAttributes = (thread: string): Attributes => ({ "thread.id": thread, "lock.seq": nextSeq(thread) });

const holdAttributes = (key: string, hold: Hold): Attributes => ({ "lock.key": key, "lock.owner": hold.owner, ...(hold.fence === null ? {} : { "lock.fence": hold.fence }) });

/** Each hold's trace, by key and owner: its acquire's span, the parent of the hold's later operations and writes (until its release). */
const holdTraces = new Map<string, Context>();
const holdId = (key: string, hold: Hold) => `${key}\u0000${hold.owner}`;
const holdContext = (key: string, hold: Hold) => holdTraces.get(holdId(key, hold)) ?? context.active();

/** `client` with each operation a span (lock.acquire, lock.renew, lock.release). */
export function tracedLock(client: LockClient, opts: TracedOptions): LockClient {
  const tracer = tracerOf(opts);
  const thread = String(opts.thread);
  const wrapped: LockClient = {
    async acquire(key: string, ttlMs: number, timeoutMs: number, request?: AcquireRequest) {
      const attributes: Attributes = { "lock.key": key, "lock.ttl_ms": ttlMs, ...threadAttributes(thread), ...(opts.kind ? { "lock.kind": opts.kind } : {}) };
      if (request?.mode) attributes["lock.mode"] = request.mode;
      const span = tracer.startSpan("lock.acquire", { attributes });
      const outcome = await traced(span, () => client.acquire(key, ttlMs, timeoutMs, request), (hold) => ({ ...holdAttributes(key, hold), "lock.ttl_ms": hold.ttlMs }));
      if (outcome.type === "ok" && !request?.reenter) holdTraces.set(holdId(key, outcome.value), trace.setSpan(context.active(), span));
      return outcome;
    },
    renew(key: string, hold: Hold, ttlMs: number) {
      const span = tracer.startSpan("lock.renew", { attributes: { ...holdAttributes(key, hold), "lock.ttl_ms": ttlMs, ...threadAttributes(thread) } }, holdContext(key, hold));
      return traced(span, () => client.renew(key, hold, ttlMs), (v) => ({ "lock.ttl_ms": v.ttlMs }));
    },
    async release(key: string, hold: Hold) {
      const span = tracer.startSpan("lock.release", { attributes: { ...holdAttributes(key, hold), ...threadAttributes(thread) } }, holdContext(key, hold));
      const outcome = await traced(span, () => client.release(key, hold), (v) => ({ "lock.released": v.released }));
      holdTraces.delete(holdId(key, hold));
      return outcome;
    },
    close: () => client.close(),
  };
  // What the workload asks of a client beyond the four, passed through.
  for (const name of ["lost", "toldLost", "whenStarted"] as const) if (client[name]) (wrapped as unknown as Record<string, unknown>)[name] = (client[name] as (...a: unknown[]) => unknown).bind(client);
  if (client.renews !== undefined) Object.defineProperty(wrapped, "renews", { value: client.renews });
  return wrapped;
}

/**
 * A write to the protected resource with `hold`'s fence as a lock.write span, in
 * the hold's trace (a hold tracedLock granted). `write` resolves ok when the
 * resource took the write, fail when it refused it (error "stale-fence"), and
 * throws when the outcome is unknown.
 */
export function tracedWrite<T>(key: string, hold: Hold, data: string, write: () => Promise<Outcome<T>>, opts: TracedOptions): Promise<Outcome<T>> {
  const span = tracerOf(opts).startSpan("lock.write", { attributes: { ...holdAttributes(key, hold), "lock.data": data, ...threadAttributes(String(opts.thread)) } }, holdContext(key, hold));
  return traced(span, write);
}

/** fencecheck's own processes' SDK under `fencecheck test --otel` (otel/sdk.ts); a service sets up its own. */
export { startSdkTracing, spanData, type SdkTracing } from "./sdk.ts";
