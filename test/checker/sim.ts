// Generated runs for the property tests: valid runs from the simulation of a
// correct lock service and resource (bench/checker-history.ts), and anomalies
// planted after them on a key of their own, each naming the events and decisions a
// witness of it must name.
import fc from "fast-check";
import { simulate, type SimOptions } from "../../bench/checker-history.ts";
import type { RunInput } from "../../checker/index.ts";
import type { HistoryEvent, HistoryHeader, ResourceDecision } from "../../store/events.ts";

export interface Run extends RunInput {
  decisions: ResourceDecision[];
}

/** Small runs of every shape the simulation makes: keys, clients, short leases, renews, lost replies, pauses. */
export const simOptions: fc.Arbitrary<SimOptions> = fc
  .record({
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    events: fc.integer({ min: 4, max: 90 }),
    keys: fc.integer({ min: 1, max: 3 }),
    clients: fc.integer({ min: 1, max: 5 }),
    workers: fc.integer({ min: 1, max: 3 }),
    infoChance: fc.constantFrom(0, 0.03, 0.15),
    ttlMs: fc.constantFrom(2, 15, 1000),
    renew: fc.boolean(),
    nemesis: fc.boolean(),
    counter: fc.boolean(),
  })
  // Fencing only the writes lets a counter lose updates when leases overlap
  // (scenario C1 of docs/experiments.md): a valid counter run has leases that never run out.
  .map(({ counter, ...o }): SimOptions => (counter ? { ...o, workload: "counter", ttlMs: 60_000, nemesis: false, fencing: true } : { ...o, fencing: true }));

export function simulated(o: SimOptions): Run {
  let header: HistoryHeader | null = null;
  const events: HistoryEvent[] = [];
  const decisions: ResourceDecision[] = [];
  simulate(o, { header: (h) => (header = h), event: (e) => events.push(e), decision: (d) => decisions.push(d) });
  return { header: header!, events, decisions };
}

export function ndjson(run: { header: HistoryHeader; events: HistoryEvent[] }): string[] {
  return [JSON.stringify(run.header), ...run.events.map((e) => JSON.stringify(e))];
}

export const PLANTED_KEY = "planted";
const MS = 1e6;

/** Appends operations on the planted key after everything else in a run. */
export class Planter {
  private t: number;
  private process: number;
  readonly events: HistoryEvent[];
  readonly decisions: ResourceDecision[];

  constructor(readonly base: Run) {
    this.events = [...base.events];
    this.decisions = [...base.decisions];
    const last = base.events.length ? base.events[base.events.length - 1].time : 0;
    const lastDecision = base.decisions.length ? base.decisions[base.decisions.length - 1].time : 0;
    this.t = Math.max(last, lastDecision) + MS;
    let top = 0;
    for (const e of base.events) if (typeof e.process === "number" && e.process > top) top = e.process;
    this.process = top + 1;
  }

  newProcess(): number {
    return this.process++;
  }

  /** One operation taking `ms` ms; returns its invoke and completion event indexes. */
  op(process: number, f: string, value: Record<string, unknown>, type: "ok" | "fail", done: Record<string, unknown> | undefined, ms = 1, error?: string): number[] {
    const invoke = this.push({ process, type: "invoke", f, key: PLANTED_KEY, value });
    this.t += ms * MS;
    const completion = this.push({ process, type, f, key: PLANTED_KEY, ...(done ? { value: done } : {}), ...(error ? { error } : {}) });
    this.t += MS;
    return [invoke, completion];
  }

  /** `extra` goes into the ok value, as a client's own facts do (e.g. `validity_ms`). */
  acquire(process: number, owner: string, fence: number | null, ttlMs: number, extra: Record<string, unknown> = {}): number[] {
    return this.op(process, "acquire", { ttl_ms: ttlMs }, "ok", { owner, fence, ttl_ms: ttlMs, ...extra });
  }

  renew(process: number, owner: string, fence: number | null, ttlMs: number, ok = true): number[] {
    return ok
      ? this.op(process, "renew", { owner, fence, ttl_ms: ttlMs }, "ok", { ttl_ms: ttlMs })
      : this.op(process, "renew", { owner, fence, ttl_ms: ttlMs }, "fail", undefined, 1, "not-owner");
  }

  release(process: number, owner: string, fence: number | null, released = true): number[] {
    return this.op(process, "release", { owner, fence }, "ok", { released });
  }

  /** A write and the resource's decision on it, halfway through; returns [invoke, completion, seq]. */
  write(process: number, owner: string, fence: number | null, data: unknown, accepted: boolean, maxBefore: number | null, fencing = true): number[] {
    const invoke = this.push({ process, type: "invoke", f: "write", key: PLANTED_KEY, value: { owner, fence, data } });
    const seq = this.decisions.length ? this.decisions[this.decisions.length - 1].seq + 1 : 1;
    this.decisions.push({ seq, time: this.t + MS / 2, op: "write", key: PLANTED_KEY, process, owner, fence, max_before: maxBefore, accepted, data, fencing });
    this.t += MS;
    const completion = accepted
      ? this.push({ process, type: "ok", f: "write", key: PLANTED_KEY, value: { owner, fence, data } })
      : this.push({ process, type: "fail", f: "write", key: PLANTED_KEY, value: { owner, fence, seen: maxBefore }, error: "stale-fence" });
    this.t += MS;
    return [invoke, completion, seq];
  }

  /** A fenced read and the resource's decision on it, halfway through; returns [invoke, completion, seq]. */
  read(process: number, owner: string, fence: number, data: unknown, accepted: boolean, maxBefore: number | null): number[] {
    const invoke = this.push({ process, type: "invoke", f: "read", key: PLANTED_KEY, value: { owner, fence } });
    const seq = this.decisions.length ? this.decisions[this.decisions.length - 1].seq + 1 : 1;
    this.decisions.push({ seq, time: this.t + MS / 2, op: "read", key: PLANTED_KEY, process, owner, fence, max_before: maxBefore, accepted, data: accepted ? data : null, fencing: true });
    this.t += MS;
    const completion = accepted
      ? this.push({ process, type: "ok", f: "read", key: PLANTED_KEY, value: { data, fence: Math.max(fence, maxBefore ?? fence) } })
      : this.push({ process, type: "fail", f: "read", key: PLANTED_KEY, value: { owner, fence, seen: maxBefore }, error: "stale-fence" });
    this.t += MS;
    return [invoke, completion, seq];
  }

  /** Moves the clock on by `ms` ms. */
  wait(ms: number): void {
    this.t += ms * MS;
  }

  run(withResource: boolean): RunInput {
    return { header: this.base.header, events: this.events, decisions: withResource ? this.decisions : null };
  }

  private push(e: Omit<HistoryEvent, "index" | "time">): number {
    const index = this.events.length;
    this.events.push({ index, time: this.t, ...e } as HistoryEvent);
    return index;
  }
}
