// From a history's events to operations and holds. docs/history-format.md promises
// that each process has at most one operation outstanding and that every invoke is
// completed by the same process and `f`, so pairing is a walk with one open slot
// per process. A hold is what one successful acquire granted: its `owner` id, which
// the hold's later renews, writes and releases carry in their invoke value. Nothing
// here is specific to drawing, so the checker can share it.
import type { HistoryEvent, ResourceDecision } from "../store/events.ts";

/** One client operation: an invoke and what completed it. */
export interface Op {
  process: number;
  f: string;
  key?: string;
  invoke: HistoryEvent;
  /** null: still open when the history ends, which counts as `info`. */
  completion: HistoryEvent | null;
  outcome: "ok" | "fail" | "info";
  /** The hold this operation belongs to: the acquire's granted owner, or the invoke's. */
  owner?: string;
  fence?: number | null;
}

/** What one successful acquire granted, and what its owner did with it. */
export interface Hold {
  owner: string;
  key?: string;
  process: number;
  fence: number | null;
  acquire: Op;
  /** Renews, writes and releases sent with this owner, in invoke order. */
  ops: Op[];
  /** The first release sent with this owner, if any. */
  release: Op | null;
  /**
   * Time until which the lease is certainly held, from the client's side: the latest
   * invoke of a successful acquire or renew plus its TTL (the server cannot have
   * started the lease before the request left). null when no TTL is known.
   */
  leaseEnd: number | null;
  /** rw (format 2): what the acquire asked for. */
  mode?: "read" | "write";
  /** reentrant (format 2): the hold's re-entries, depth 2 and deeper, in grant order. */
  entries?: Reentry[];
}

/** One re-entry of a reentrant hold: the acquire at `depth` and the release that brought the count back down. */
export interface Reentry {
  depth: number;
  acquire: Op;
  release: Op | null;
}

export interface Pairing {
  ops: Op[];
  /** Completions with no open invoke of the same process and `f` (a malformed history). */
  orphans: HistoryEvent[];
}

/** Events ordered as docs/history-format.md says readers order them: by (time, index). */
export function ordered(events: readonly HistoryEvent[]): readonly HistoryEvent[] {
  for (let i = 1; i < events.length; i++) {
    const a = events[i - 1], b = events[i];
    if (a.time > b.time || (a.time === b.time && a.index > b.index)) {
      return [...events].sort((x, y) => x.time - y.time || x.index - y.index);
    }
  }
  return events;
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const fenceOf = (v: unknown): number | null | undefined =>
  v === null ? null : typeof v === "number" ? v : undefined;

/** Client operations in invoke order; nemesis events are left to faults.ts. */
export function pairOps(events: readonly HistoryEvent[]): Pairing {
  const ops: Op[] = [];
  const orphans: HistoryEvent[] = [];
  const open = new Map<number, Op>();
  for (const e of ordered(events)) {
    // Notices are no operations (the report shows them apart).
    if (typeof e.process !== "number" || e.type === "notice") continue;
    if (e.type === "invoke") {
      // A second invoke while one is open breaks the contract; the first can then
      // only be treated as unknown.
      open.delete(e.process);
      const op: Op = { process: e.process, f: e.f, key: e.key, invoke: e, completion: null, outcome: "info" };
      const owner = str(e.value?.owner);
      if (owner !== undefined) op.owner = owner;
      const fence = fenceOf(e.value?.fence);
      if (fence !== undefined) op.fence = fence;
      open.set(e.process, op);
      ops.push(op);
      continue;
    }
    const op = open.get(e.process);
    if (!op || op.f !== e.f) {
      orphans.push(e);
      continue;
    }
    open.delete(e.process);
    op.completion = e;
    op.outcome = e.type;
    if (op.f === "acquire" && e.type === "ok") {
      const owner = str(e.value?.owner);
      if (owner !== undefined) op.owner = owner;
      const fence = fenceOf(e.value?.fence);
      if (fence !== undefined) op.fence = fence;
    }
  }
  return { ops, orphans };
}

const ttlOf = (op: Op): number | undefined => {
  const t = op.completion?.value?.ttl_ms ?? op.invoke.value?.ttl_ms;
  return typeof t === "number" && Number.isFinite(t) ? t : undefined;
};

/** The holds granted in a history, in acquire order, with each owner's later ops. */
export function holdsOf(ops: readonly Op[], reentrant = false): Hold[] {
  const byOwner = new Map<string, Hold>();
  const holds: Hold[] = [];
  for (const op of ops) {
    if (op.owner === undefined) continue;
    if (op.f === "acquire") {
      if (op.outcome !== "ok") continue;
      if (byOwner.has(op.owner)) {
        if (reentrant) reenter(byOwner.get(op.owner)!, op);
        continue;
      }
      const ttl = ttlOf(op);
      const hold: Hold = {
        owner: op.owner, key: op.key, process: op.process, fence: op.fence ?? null,
        acquire: op, ops: [], release: null,
        leaseEnd: ttl === undefined ? null : op.invoke.time + ttl * 1e6,
      };
      byOwner.set(op.owner, hold);
      holds.push(hold);
      continue;
    }
    const hold = byOwner.get(op.owner);
    if (!hold) continue;
    hold.ops.push(op);
    // A reentrant hold's inner release lowers its count; the hold ends with its outermost release.
    if (op.f === "release" && hold.release === null && !(reentrant && innerRelease(hold, op))) hold.release = op;
    if (op.f === "renew" && op.outcome === "ok") {
      const ttl = ttlOf(op);
      if (ttl !== undefined) hold.leaseEnd = Math.max(hold.leaseEnd ?? 0, op.invoke.time + ttl * 1e6);
    }
  }
  return holds;
}

/**
 * When a hold ended, as far as the history tells: its release's completion (the end
 * of the history if that never came); never released, the end of its lease or its
 * last operation, whichever is later, but not past `t1`, the end of the history.
 */
export function heldUntil(h: Hold, t1: number): number {
  const ok = h.acquire.completion;
  const last = h.ops.reduce((t, o) => Math.max(t, o.completion?.time ?? o.invoke.time), ok?.time ?? h.acquire.invoke.time);
  const r = h.release;
  return r ? (r.completion?.time ?? t1) : Math.min(t1, Math.max(last, h.leaseEnd ?? t1));
}

/** An operation's `depth` (reentrant, format 2): 1 the outermost, absent for a mutex's. */
export function depthOf(op: Op): number | undefined {
  const d = op.invoke.value?.depth;
  return typeof d === "number" && Number.isInteger(d) && d >= 1 ? d : undefined;
}

/** A re-entry granted to a hold already held by its owner (its ok carries the hold's owner). */
function reenter(hold: Hold, op: Op): void {
  const depth = depthOf(op);
  if (depth === undefined || depth < 2) return;
  (hold.entries ??= []).push({ depth, acquire: op, release: null });
}

/** A release at depth 2 or deeper: closes the latest open re-entry of that depth. */
function innerRelease(hold: Hold, op: Op): boolean {
  const depth = depthOf(op);
  if (depth === undefined || depth < 2) return false;
  const entries = hold.entries ?? [];
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i].depth === depth && entries[i].release === null) {
      entries[i].release = op;
      break;
    }
  }
  return true;
}

/**
 * The resource decision each write led to. A process has one operation outstanding,
 * so the decision for a process at time t belongs to that process's write whose
 * invoke came at or before t and that had not completed before t.
 */
export function decisionsOfWrites(ops: readonly Op[], decisions: readonly ResourceDecision[]): Map<Op, ResourceDecision> {
  const writes = new Map<number, Op[]>();
  for (const op of ops) {
    if (op.f !== "write") continue;
    const list = writes.get(op.process);
    if (list) list.push(op);
    else writes.set(op.process, [op]);
  }
  const found = new Map<Op, ResourceDecision>();
  for (const d of decisions) {
    if (d.op !== "write") continue;
    const list = writes.get(d.process);
    if (!list) continue;
    // Last write invoked at or before the decision (binary search: invoke order).
    let lo = 0, hi = list.length - 1, at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid].invoke.time <= d.time) { at = mid; lo = mid + 1; } else hi = mid - 1;
    }
    if (at < 0) continue;
    const op = list[at];
    const ends = op.completion?.time ?? Infinity;
    if (ends < d.time || found.has(op) || (op.owner !== undefined && op.owner !== d.owner)) continue;
    found.set(op, d);
  }
  return found;
}
