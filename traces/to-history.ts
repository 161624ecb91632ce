// A trace's lock spans as a run's history (docs/traces.md): each lock.* span of
// a client is one operation, invoked at its start and completed at its end, and
// each lock.decision span of the resource is one line of resource.ndjson. What
// the trace lacks is counted, never filled in: a hold with no release span
// stays certainly valid only until its grant plus its TTL (the checker's own
// rule for any hold), and a write whose decision is missing is unmatched.
//
// Spans from different hosts are placed by their own timestamps; each process
// names its host (host.name, else its instance), so that `--clock-error` can
// give the checker how far each host's clock may be off (checker/clock.ts).
import { BadInput } from "../lib/exit.ts";
import { LOCK_KINDS, type HistoryHeader, type ResourceDecision, type UnindexedEvent } from "../store/events.ts";
import type { AttributeValue, Span } from "./otlp-json.ts";

/** The client operations a span names, and the resource's decision. */
const OPERATIONS = { "lock.acquire": "acquire", "lock.renew": "renew", "lock.release": "release", "lock.write": "write", "lock.read": "read" } as const;
const DECISION = "lock.decision";
/** How far a span of a thread may seem to start before the last one ended: the JS SDK's whole-millisecond starts. */
const PRECISION_NS = 1_000_000n;

export interface TraceHistory {
  header: HistoryHeader;
  /** Each thread's in its order: HistoryWriter puts them in time order and numbers them. */
  events: UnindexedEvent[];
  /** resource.ndjson's lines, or null when the trace has no lock.decision span (the order of writes then comes from the history). */
  resource: Array<ResourceDecision & ({ trace_id: string; span_id: string } | { missing: number })> | null;
  /** Per process number: the instance, thread and host it was, for run.json. */
  processes: Record<string, { instance: string; thread: string; host: string }>;
  /** What the trace lacks or holds besides the lock spans: counted, never guessed. */
  gaps: Gaps;
}

export interface Gaps {
  /** Spans that are neither a lock operation nor a decision. */
  other_spans: number;
  /** Holds granted (acquire ok) with no release span. */
  holds_without_release: number;
  /** Renew, release and write spans whose hold has no acquire span in the trace. */
  operations_without_acquire: number;
  /** Client writes that completed ok with no decision span of the same hold and fence (only when the trace has decisions). */
  writes_without_decision: number;
  /** Decisions with no client write span of their hold. */
  decisions_without_write: number;
  /** Decisions a key's orders prove were made that the trace lacks (each gap written as one decision of unknown outcome). */
  decisions_missing: number;
  /** Spans that seemed to start before the last span of their thread ended, by less than a millisecond: started where it ended. */
  starts_moved_within_precision: number;
  /** Likewise by more, within twice the host's clock bound (--clock-error): a clock step back between them. */
  starts_moved_within_clock_error: number;
}

interface Op {
  span: Span;
  f: (typeof OPERATIONS)[keyof typeof OPERATIONS];
  key: string;
  thread: string;
}

/**
 * BadInput unless one span, on its own, follows the conventions: what
 * traceHistory would refuse it for, short of what needs its neighbours (two
 * overlapping spans of a thread, two lock kinds). The live receiver rejects such a
 * span alone (OTLP's partial success) instead of refusing its whole request.
 */
export function checkSpan(span: Span): void {
  if (span.name === DECISION) {
    for (const name of ["lock.key", "lock.owner"]) str(span, name, true);
    for (const name of ["lock.fence", "lock.decision.order", "lock.decision.max_before"]) int(span, name);
    for (const name of ["lock.decision.accepted", "lock.fencing"]) bool(span, name);
    return;
  }
  if (!(span.name in OPERATIONS)) return;
  const f = OPERATIONS[span.name as keyof typeof OPERATIONS];
  str(span, "lock.key", true);
  const outcome = outcomeOf(span);
  str(span, "lock.owner", f !== "acquire" && f !== "read" ? true : outcome === "ok" && f === "acquire");
  for (const name of ["lock.fence", "lock.ttl_ms", "lock.depth"]) int(span, name);
  bool(span, "lock.released");
  for (const name of ["lock.mode", "lock.error"]) str(span, name);
  kindOf(span);
  reentryOf(span);
  threadOf(span);
}

/**
 * What the live check (traces/live) tells the reading of one window of a
 * stream: `origin`, the Unix ns times count from (by default the first span's
 * start), the stream's own for every window; `orderBefore`, each key's last
 * decision order in the windows before, so that a window's first decision is
 * not taken for one after missing decisions.
 */
export interface WindowContext {
  origin?: bigint;
  orderBefore?: ReadonlyMap<string, number>;
}

/** The history of a trace's spans; BadInput naming the span of anything the conventions do not allow. */
export function traceHistory(spans: readonly Span[], run: string, clockErrorMs: (host: string) => number = () => 0, window: WindowContext = {}): TraceHistory {
  const ops: Op[] = [];
  const decisions: Span[] = [];
  let other = 0;
  for (const span of spans) {
    if (span.name === DECISION) decisions.push(span);
    else if (span.name in OPERATIONS) ops.push({ span, f: OPERATIONS[span.name as keyof typeof OPERATIONS], key: str(span, "lock.key", true)!, thread: threadOf(span) });
    else other++;
  }
  if (ops.length === 0) throw new BadInput(`no lock spans (${Object.keys(OPERATIONS).join(", ")}) among the ${spans.length} spans read: docs/traces.md says what fencecheck traces reads`);
  const t0 = window.origin ?? [...ops.map((o) => o.span.start), ...decisions.map((d) => d.start)].reduce((a, b) => (b < a ? b : a));
  const at = (ns: bigint) => Number(ns - t0);

  // One history process per (instance, thread), in order of their first span;
  // after an unknown outcome the thread carries on as a new process, as a
  // fencecheck client does, since the history allows a process nothing after it.
  const threads = new Map<string, Op[]>();
  for (const op of [...ops].sort((a, b) => cmp(a.span.start, b.span.start))) {
    const list = threads.get(op.thread) ?? [];
    list.push(op);
    threads.set(op.thread, list);
  }
  // A thread's spans in the order lock.seq gives where all of them carry it: a
  // wall clock that stepped back between two of them puts them the wrong way
  // round by their starts (docs/traces.md, clocks).
  for (const list of threads.values()) {
    const seq = list.map((op) => int(op.span, "lock.seq"));
    if (seq.every((n) => n !== undefined)) {
      const at = new Map(list.map((op, i) => [op, seq[i]!]));
      list.sort((a, b) => at.get(a)! - at.get(b)!);
    }
  }
  // Each hold's last operation in its thread, and the holds whose release the trace has.
  const holdOf = (op: Op): string | undefined => {
    const owner = op.span.attributes["lock.owner"];
    return typeof owner === "string" && op.f !== "read" ? `${op.key}\u0000${owner}` : undefined;
  };
  const lastOfHold = new Map<string, Op>();
  const releaseSpans = new Set<string>();
  for (const list of threads.values())
    for (const op of list) {
      const hold = holdOf(op);
      if (hold === undefined) continue;
      lastOfHold.set(hold, op);
      if (op.f === "release") releaseSpans.add(hold);
    }
  const events: UnindexedEvent[] = [];
  const processes: TraceHistory["processes"] = {};
  const holdProcess = new Map<string, number>();
  const acquired = new Set<string>();
  const okWrites: Array<{ owner: string; key: string; fence: number | null; span: Span }> = [];
  /** Every hold (key, owner) with a write span, whatever its outcome: a refused write's decision has its write. */
  const writeSpans = new Set<string>();
  let withoutAcquire = 0;
  let clamped = 0;
  let movedByClock = 0;
  let kind: string | undefined;
  let fenceOnReentry: string | undefined;
  let nextProcess = 0;
  for (const [thread, list] of threads) {
    let process = nextProcess++;
    processes[process] = { ...splitThread(thread), host: hostOf(list[0].span) };
    let previous: Span | undefined;
    let previousEnd = 0n;
    // A host whose clock may be off by e can read two instants up to 2e apart the
    // wrong way round (a step back between them): its thread's spans may seem to
    // overlap by that much, and are taken one after the other.
    const stepNs = BigInt(Math.round(2 * clockErrorMs(processes[process].host) * 1e6));
    for (const op of list) {
      const { span, f, key } = op;
      // OpenTelemetry's JS SDK places each span's start on the wall clock as read
      // at that span's creation, in whole milliseconds (Date.now()), and its end at
      // the start plus a monotonic duration, so the next span of a thread can seem
      // to start up to a millisecond before the last one ended. Within that, it starts where the last one ended (counted);
      // beyond it, two operations of one thread overlapped, which the history allows no process.
      // A span so moved can be shorter than the move (a sub-millisecond release
      // after a write): its end moves with it, to its new start, or the history
      // would complete it before its invoke.
      let start = span.start;
      let end = span.end;
      if (previous && start < previousEnd) {
        const by = previousEnd - start;
        if (by > PRECISION_NS + stepNs)
          throw new BadInput(
            `${span.where}: span ${span.spanId} (${span.name}) starts ${Number(by) / 1e6} ms before span ${previous.spanId} (${previous.name}) of the same thread ends: a thread has one lock operation at a time (docs/traces.md, processes); ` +
              `if host ${JSON.stringify(processes[process].host)}'s clock stepped back between them, give its bound with --clock-error (half the step at least)`,
          );
        start = previousEnd;
        if (end < start) end = start;
        if (by > PRECISION_NS) movedByClock++;
        else clamped++;
      }
      previous = span;
      previousEnd = end;
      const outcome = outcomeOf(span);
      const owner = str(span, "lock.owner", f !== "acquire" && f !== "read" ? true : outcome === "ok" && f === "acquire");
      const fence = int(span, "lock.fence");
      const ttl = int(span, "lock.ttl_ms");
      const ids = { trace_id: span.traceId, span_id: span.spanId };
      const spanKind = kindOf(span);
      if (spanKind !== undefined) {
        if (kind !== undefined && kind !== spanKind) throw new BadInput(`${span.where}: span ${span.spanId}: lock.kind ${spanKind}, where earlier spans said ${kind}: one trace check reads one lock kind`);
        kind = spanKind;
      }
      fenceOnReentry = reentryOf(span) ?? fenceOnReentry;
      const kindFields = { ...optional("mode", str(span, "lock.mode")), ...optional("depth", int(span, "lock.depth")) };
      let invoke: Record<string, unknown>;
      let done: Record<string, unknown> | undefined;
      if (f === "acquire") {
        invoke = { ...optional("ttl_ms", ttl), ...kindFields };
        if (outcome === "ok") done = { owner, fence: fence ?? null, ...optional("ttl_ms", ttl), ...kindFields, ...ids };
      } else if (f === "renew") {
        invoke = { owner, fence: fence ?? null, ...optional("ttl_ms", ttl) };
        if (outcome === "ok") done = { ...optional("ttl_ms", ttl), ...ids };
      } else if (f === "release") {
        invoke = { owner, fence: fence ?? null, ...optional("depth", int(span, "lock.depth")) };
        const releasedFlag = bool(span, "lock.released");
        if (outcome === "ok") done = { released: releasedFlag ?? true, ...ids };
      } else if (f === "write") {
        invoke = { owner, fence: fence ?? null, data: attr(span, "lock.data") ?? null };
        if (outcome === "ok") done = { ...invoke, ...ids };
      } else {
        invoke = owner === undefined ? {} : { owner, fence: fence ?? null };
        if (outcome === "ok") done = { data: attr(span, "lock.data") ?? null, fence: fence ?? null, ...ids };
      }
      const hold = holdOf(op);
      if (hold !== undefined && owner !== undefined) {
        if (f === "acquire" && outcome === "ok") {
          acquired.add(hold);
          holdProcess.set(hold, process);
        } else if (f !== "acquire") {
          if (!acquired.has(hold)) withoutAcquire++;
          if (f === "write") writeSpans.add(`${key}\u0000${owner}`);
          if (f === "write" && outcome === "ok") okWrites.push({ owner, key, fence: fence ?? null, span });
          if (!holdProcess.has(hold)) holdProcess.set(hold, process);
        }
      }
      events.push({ time: at(start), process, type: "invoke", f, key, value: { ...invoke, ...ids } });
      const error = str(span, "lock.error");
      const completion: UnindexedEvent = { time: at(end), process, type: outcome === "unknown" ? "info" : outcome, f, key, value: done ?? ids };
      if (outcome !== "ok") completion.error = error ?? (outcome === "unknown" ? "unknown" : "fail");
      events.push(completion);
      // A hold with no release span may have been released at any moment after
      // its last operation in the trace (the span was dropped), or never: it ends
      // there with a release of unknown outcome, so that it is certainly valid no
      // longer than the trace shows it held. After an operation of unknown outcome
      // the thread goes on as a new process (the history allows the old one
      // nothing more), which makes that release, as a run's client releases a
      // hold after a write that timed out.
      const nextProcessOfThread = (): void => {
        process = nextProcess++;
        processes[process] = { ...splitThread(thread), host: hostOf(list[0].span) };
      };
      let unknown = outcome === "unknown";
      if (hold !== undefined && !releaseSpans.has(hold) && lastOfHold.get(hold) === op && (f !== "acquire" || outcome === "ok")) {
        if (unknown) nextProcessOfThread();
        const value = { owner, fence: fence ?? null, no_release_span: true };
        events.push({ time: at(end), process, type: "invoke", f: "release", key, value });
        events.push({ time: at(end), process, type: "info", f: "release", key, value, error: "no-release-span" });
        unknown = true;
      }
      if (unknown) nextProcessOfThread();
    }
  }

  const logged = decisions.length ? decisionLines(decisions, at, holdProcess, window.orderBefore) : null;
  const resource = logged?.lines ?? null;
  let writesWithoutDecision = 0;
  let decisionsWithoutWrite = 0;
  if (resource) {
    const decided = new Set(resource.map((l) => `${l.key}\u0000${l.owner}\u0000${l.fence}`));
    writesWithoutDecision = okWrites.filter((w) => !decided.has(`${w.key}\u0000${w.owner}\u0000${w.fence}`)).length;
    decisionsWithoutWrite = resource.filter((l) => !writeSpans.has(`${l.key}\u0000${l.owner}`)).length;
  }
  const fencing = decisions.some((d) => bool(d, "lock.fencing") === true);
  return {
    header: { format: 2, kind: "header", run, workload: "fenced-write", backend: "traces", fencing, lock: kind ?? "mutex", ...optional("fence_on_reentry", fenceOnReentry) },
    events,
    resource,
    processes,
    gaps: {
      other_spans: other,
      holds_without_release: [...acquired].filter((h) => !releaseSpans.has(h)).length,
      operations_without_acquire: withoutAcquire,
      writes_without_decision: writesWithoutDecision,
      decisions_without_write: decisionsWithoutWrite,
      decisions_missing: logged?.missing ?? 0,
      starts_moved_within_precision: clamped,
      starts_moved_within_clock_error: movedByClock,
    },
  };
}

/**
 * The resource's decisions, in the order of their spans' ends, numbered from 1;
 * each key's `order` as the resource set it. Where a key's orders skip (holds
 * sampled out, spans dropped, or a trace that starts after the key's first
 * decision), the decisions the numbers prove were made are missing: before the
 * decision after the gap stands one line of unknown outcome (`accepted: null`,
 * `missing`: how many) whose fence is that decision's `max_before`, the highest
 * fence the resource had taken by then, so that a refusal the missing ones
 * explain is not proved false; without a max_before, that decision's own fence,
 * the least that leaves its refusal unproved.
 */
function decisionLines(decisions: Span[], at: (ns: bigint) => number, holdProcess: Map<string, number>, orderBefore?: ReadonlyMap<string, number>): { lines: NonNullable<TraceHistory["resource"]>; missing: number } {
  const lines: NonNullable<TraceHistory["resource"]> = [];
  const lastOrder = new Map<string, number>(orderBefore);
  let missing = 0;
  for (const d of [...decisions].sort((a, b) => cmp(a.end, b.end))) {
    const key = str(d, "lock.key", true)!;
    const owner = str(d, "lock.owner", true)!;
    const order = int(d, "lock.decision.order");
    const accepted = bool(d, "lock.decision.accepted");
    const process = holdProcess.get(`${key}\u0000${owner}`);
    const maxBefore = int(d, "lock.decision.max_before") ?? null;
    const fencing = bool(d, "lock.fencing") ?? false;
    const time = at(d.end);
    if (order !== undefined) {
      const skipped = order - (lastOrder.get(key) ?? 0) - 1;
      lastOrder.set(key, Math.max(order, lastOrder.get(key) ?? 0));
      if (skipped > 0) {
        missing += skipped;
        lines.push({ seq: lines.length + 1, time, op: "write", key, process: -1, owner: "", fence: maxBefore ?? int(d, "lock.fence") ?? null, max_before: null, accepted: null, data: null, fencing, order: order - 1, missing: skipped });
      }
    }
    lines.push({
      seq: lines.length + 1,
      time,
      op: str(d, "lock.operation") === "read" ? "read" : "write",
      key,
      // The hold's process; a decision whose hold the trace lacks names none it could.
      process: process ?? -1,
      owner,
      fence: int(d, "lock.fence") ?? null,
      max_before: maxBefore,
      accepted: accepted ?? null,
      data: attr(d, "lock.data") ?? null,
      fencing,
      ...optional("order", order),
      trace_id: d.traceId,
      span_id: d.spanId,
    });
  }
  return { lines, missing };
}

/** ok, fail or unknown: lock.outcome, else an ERROR status is unknown (a span's status cannot say fail) and any other ok. */
function outcomeOf(span: Span): "ok" | "fail" | "unknown" {
  const o = str(span, "lock.outcome");
  if (o === undefined) return span.status === 2 ? "unknown" : "ok";
  if (o === "ok" || o === "fail" || o === "unknown") return o;
  throw new BadInput(`${span.where}: span ${span.spanId} (${span.name}): lock.outcome ${JSON.stringify(o)} is not ok, fail or unknown`);
}

function kindOf(span: Span): string | undefined {
  const kind = str(span, "lock.kind");
  if (kind !== undefined && !(LOCK_KINDS as readonly string[]).includes(kind)) throw new BadInput(`${span.where}: span ${span.spanId}: lock.kind ${JSON.stringify(kind)} is not one of ${LOCK_KINDS.join(", ")}`);
  return kind;
}

function reentryOf(span: Span): string | undefined {
  const reentry = str(span, "lock.fence_on_reentry");
  if (reentry !== undefined && reentry !== "same" && reentry !== "new") throw new BadInput(`${span.where}: span ${span.spanId}: lock.fence_on_reentry ${JSON.stringify(reentry)} is not same or new`);
  return reentry;
}

/** A history process is one thread of one service instance: service.instance.id (else host.name and process.pid) and thread.id. */
function threadOf(span: Span): string {
  const r = span.resource;
  const instance = r["service.instance.id"] ?? (r["host.name"] !== undefined || r["process.pid"] !== undefined ? `${r["host.name"] ?? "?"}/${r["process.pid"] ?? "?"}` : undefined);
  if (instance === undefined)
    throw new BadInput(`${span.where}: span ${span.spanId} (${span.name}): its resource has no service.instance.id (nor host.name and process.pid): a history process is one thread of one instance (docs/traces.md)`);
  const thread = span.attributes["thread.id"] ?? span.attributes["thread.name"] ?? "main";
  return `${instance}\u0000${thread}`;
}

/** The machine whose clock a span's times are on: host.name, else (a resource without one) its instance. */
export function hostOf(span: Span): string {
  const r = span.resource;
  const host = r["host.name"] ?? r["service.instance.id"] ?? "?";
  return String(host);
}

function splitThread(thread: string): { instance: string; thread: string } {
  const [instance, t] = thread.split("\u0000");
  return { instance, thread: t };
}

function attr(span: Span, name: string): AttributeValue | undefined {
  return span.attributes[name];
}

function str(span: Span, name: string, required = false): string | undefined {
  const v = span.attributes[name];
  if (v === undefined) {
    if (required) throw new BadInput(`${span.where}: span ${span.spanId} (${span.name}) has no ${name}`);
    return undefined;
  }
  if (typeof v !== "string" || v === "") throw new BadInput(`${span.where}: span ${span.spanId} (${span.name}): ${name} ${JSON.stringify(v)} is not a string`);
  return v;
}

function int(span: Span, name: string): number | undefined {
  const v = span.attributes[name];
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v)) throw new BadInput(`${span.where}: span ${span.spanId} (${span.name}): ${name} ${JSON.stringify(v)} is not an integer`);
  return v;
}

function bool(span: Span, name: string): boolean | undefined {
  const v = span.attributes[name];
  if (v === undefined) return undefined;
  if (typeof v !== "boolean") throw new BadInput(`${span.where}: span ${span.spanId} (${span.name}): ${name} ${JSON.stringify(v)} is not a boolean`);
  return v;
}

const optional = <K extends string, V>(name: K, value: V | undefined): Partial<Record<K, V>> => (value === undefined ? {} : ({ [name]: value } as Record<K, V>));

const cmp = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);
