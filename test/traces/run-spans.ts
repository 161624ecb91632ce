// A stored run's operations written as the spans docs/traces.md asks a service
// for: one span per operation, one thread per process, the resource's decisions
// as lock.decision spans, and, as a service's would be, one trace per hold (its
// acquire, renews, writes, reads, release and the resource's decisions of its
// writes), so that head sampling keeps or drops a hold whole. `keep` leaves
// spans out, as sampling and a lossy pipeline do.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { instanceLine, kv } from "./otlp.ts";

const T0 = 1_796_000_000_000_000_000n;

export type Line = Record<string, any>;
export const readLines = (file: string): Line[] => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);

const text = (v: unknown) => (v === undefined || v === null ? undefined : typeof v === "string" ? v : JSON.stringify(v));

/** What `keep` is told of each span: its name and the hold (key and owner) whose trace it is in, if any. */
export interface SpanInfo {
  name: string;
  hold: string | null;
}

/** A run's operations and decisions as OTLP JSON lines: the client spans of one instance, one thread per process, and the resource's. */
export function asSpans(run: string, keep: (s: SpanInfo) => boolean = () => true): string {
  const [header, ...events] = readLines(join(run, "history.ndjson"));
  const open = new Map<number, Line>();
  const spans: (Line | null)[] = [];
  let id = 0;
  // A hold's trace id: one per (key, owner); an operation of no hold (a failed acquire, a read) has a trace of its own.
  const traces = new Map<string, string>();
  const traceOf = (hold: string | null): string => {
    const known = hold === null ? undefined : traces.get(hold);
    if (known) return known;
    const t = (0x1000000 + traces.size + id).toString(16).padStart(32, "0");
    if (hold !== null) traces.set(hold, t);
    return t;
  };
  const span = (name: string, start: number, end: number, attrs: Record<string, unknown>) => {
    id++;
    const owner = attrs["lock.owner"];
    const hold = typeof owner === "string" ? `${attrs["lock.key"]} ${owner}` : null;
    const s = { traceId: traceOf(hold), spanId: id.toString(16).padStart(16, "0"), name, startTimeUnixNano: String(T0 + BigInt(start)), endTimeUnixNano: String(T0 + BigInt(end)), attributes: kv(attrs) };
    return keep({ name, hold }) ? s : null;
  };
  for (const e of events) {
    if (typeof e.process !== "number") continue;
    if (e.type === "invoke") open.set(e.process, e);
    const inv = open.get(e.process);
    // A span never ended is never exported: an invoke the run never completed has none.
    if (e.type === "invoke" || e.type === "notice" || !inv) continue;
    open.delete(e.process);
    const iv = inv.value ?? {};
    const ov = e.value ?? {};
    const ttls = [iv.ttl_ms, ov.ttl_ms].filter((t) => typeof t === "number");
    spans.push(
      span(`lock.${inv.f}`, inv.time, e.time, {
        "lock.key": inv.key,
        "lock.owner": ov.owner ?? iv.owner,
        "lock.fence": inv.f === "acquire" ? ov.fence : iv.fence,
        "lock.ttl_ms": (inv.f === "acquire" || inv.f === "renew") && ttls.length ? Math.min(...ttls) : undefined,
        "lock.outcome": e.type === "info" ? "unknown" : e.type,
        "lock.error": e.error,
        "lock.released": inv.f === "release" && ov.released === false ? false : undefined,
        "lock.data": inv.f === "write" ? text(iv.data) : undefined,
        "lock.kind": inv.f === "acquire" ? header.lock : undefined,
        "lock.fence_on_reentry": inv.f === "acquire" ? header.fence_on_reentry : undefined,
        "lock.mode": iv.mode,
        "lock.depth": iv.depth,
        "thread.id": String(e.process),
      }),
    );
  }
  const perKey = new Map<string, number>();
  const decisions = readLines(join(run, "resource.ndjson")).map((l) => {
    const order = l.order ?? (perKey.get(l.key) ?? 0) + 1;
    perKey.set(l.key, order);
    return span("lock.decision", l.time, l.time, {
      "lock.key": l.key,
      "lock.owner": l.owner,
      "lock.fence": l.fence,
      "lock.data": text(l.data),
      "lock.decision.accepted": l.accepted,
      "lock.decision.order": order,
      "lock.decision.max_before": l.max_before,
      "lock.fencing": l.fencing,
      "lock.operation": l.op,
    });
  });
  const kept = spans.filter((x) => x !== null);
  const keptDecisions = decisions.filter((x) => x !== null);
  return [instanceLine("clients", kept), ...(keptDecisions.length ? [instanceLine("resource", keptDecisions)] : [])].join("\n") + "\n";
}

