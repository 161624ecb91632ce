// Hand-written histories for the checker's tests: operations are added with their
// times in ms, in any order; `build()` orders them by time and numbers them, so a
// test can name the events it expects in a witness by the objects it added.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir as tempDirOf } from "../helpers.ts";
import type { HistoryEvent, HistoryHeader, ResourceDecision } from "../../store/events.ts";

type Outcome = "ok" | "fail" | "info" | "open";

export interface OpEvents {
  invoke: HistoryEvent;
  done: HistoryEvent | null;
}

const NS = 1e6;

export class History {
  readonly header: HistoryHeader;
  private added: HistoryEvent[] = [];

  constructor(header: Partial<HistoryHeader> = {}) {
    this.header = { format: 1, kind: "header", run: "test", workload: "fenced-write", backend: "fake", fencing: true, ...header };
  }

  private add(e: Omit<HistoryEvent, "index">): HistoryEvent {
    const ev = { index: -1, ...e } as HistoryEvent;
    this.added.push(ev);
    return ev;
  }

  op(process: number, f: string, key: string, at: [number, number?], value: Record<string, unknown>, outcome: Outcome, doneValue?: Record<string, unknown>, error?: string): OpEvents {
    const invoke = this.add({ time: at[0] * NS, process, type: "invoke", f, key, value });
    if (outcome === "open") return { invoke, done: null };
    const done = this.add({ time: (at[1] ?? at[0]) * NS, process, type: outcome, f, key });
    if (doneValue) done.value = doneValue;
    if (error) done.error = error;
    return { invoke, done };
  }

  acquire(process: number, key: string, at: [number, number], owner: string, fence: number | null, ttl = 1000): OpEvents {
    return this.op(process, "acquire", key, at, { ttl_ms: ttl }, "ok", { owner, fence, ttl_ms: ttl });
  }

  write(process: number, key: string, at: [number, number?], owner: string, fence: number | null, data: unknown, outcome: Outcome = "ok"): OpEvents {
    const ref = { owner, fence };
    const doneValue = outcome === "ok" ? { ...ref, data } : outcome === "fail" ? { ...ref, seen: 0 } : undefined;
    return this.op(process, "write", key, at, { ...ref, data }, outcome, doneValue, outcome === "fail" ? "stale-fence" : outcome === "info" ? "timeout" : undefined);
  }

  /** A read; with a fence it is a fenced read (--fence-reads) and its invoke names the hold. */
  read(process: number, key: string, at: [number, number?], owner: string, fence: number | null, data: unknown, outcome: Outcome = "ok"): OpEvents {
    const ref = fence === null ? {} : { owner, fence };
    const doneValue = outcome === "ok" ? { data, fence } : outcome === "fail" ? { ...ref, seen: 0 } : undefined;
    return this.op(process, "read", key, at, ref, outcome, doneValue, outcome === "fail" ? "stale-fence" : outcome === "info" ? "timeout" : undefined);
  }

  renew(process: number, key: string, at: [number, number?], owner: string, fence: number | null, ttl: number, outcome: Outcome = "ok"): OpEvents {
    return this.op(process, "renew", key, at, { owner, fence, ttl_ms: ttl }, outcome, outcome === "ok" ? { ttl_ms: ttl } : undefined, outcome === "fail" ? "not-owner" : undefined);
  }

  release(process: number, key: string, at: [number, number?], owner: string, fence: number | null, outcome: Outcome = "ok"): OpEvents {
    return this.op(process, "release", key, at, { owner, fence }, outcome, outcome === "ok" ? { released: true } : undefined);
  }

  /** A notice (format 2): what the lock library told its user. */
  notice(process: number, time: number, f: "lost" | "suspended" | "reconnected", key?: string, owner: string | null = null): HistoryEvent {
    return this.add({ time: time * NS, process, type: "notice", f, ...(key === undefined ? {} : { key }), value: { owner } });
  }

  nemesis(time: number, f: string, value: Record<string, unknown> = {}): HistoryEvent {
    return this.add({ time: time * NS, process: "nemesis", type: "info", f, value });
  }

  /** Events in time order (ties in the order added), numbered from 0. */
  build(): HistoryEvent[] {
    const events = this.added.map((e, i) => ({ e, i })).sort((a, b) => a.e.time - b.e.time || a.i - b.i).map(({ e }) => e);
    events.forEach((e, i) => (e.index = i));
    return events;
  }

  ndjson(): string {
    return [this.header, ...this.build()].map((o) => JSON.stringify(o) + "\n").join("");
  }
}

/** A resource decision; times in ms. */
export function decision(seq: number, time: number, key: string, process: number, owner: string, fence: number | null, maxBefore: number | null, accepted: boolean, data: unknown, op: "write" | "read" = "write"): ResourceDecision {
  return { seq, time: time * NS, op, key, process, owner, fence, max_before: maxBefore, accepted, data, fencing: true };
}

export const tempDir = (): string => tempDirOf("fencecheck-test-");

/** A run directory holding this history (and resource log, when given). */
export function writeRun(h: History | string, decisions?: ResourceDecision[] | string, dir = tempDir()): string {
  writeFileSync(join(dir, "history.ndjson"), typeof h === "string" ? h : h.ndjson());
  if (decisions !== undefined) {
    writeFileSync(join(dir, "resource.ndjson"), typeof decisions === "string" ? decisions : decisions.map((d) => JSON.stringify(d) + "\n").join(""));
  }
  return dir;
}
