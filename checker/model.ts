// What the analyses look at: the history's events paired into operations, the
// holds those operations belong to (by `owner`), and the writes per key. Built
// once per check so that each analysis stays a short loop over ready data.
import type { HistoryEvent, HistoryHeader, ResourceDecision } from "../store/events.ts";

export interface Op {
  f: string;
  process: number;
  key: string | undefined;
  invoke: HistoryEvent;
  /** The completion, or null when the invoke was still open at the end. */
  done: HistoryEvent | null;
  /** An invoke still open at the end counts as info. */
  outcome: "ok" | "fail" | "info";
  start: number;
  /**
   * The latest time the operation can have taken effect: its completion when ok
   * or fail, never (Infinity) when info, since a delayed request may still land.
   */
  end: number;
  /** From the invoke's value: the hold it was sent for, its fence, written data. */
  owner: string | null;
  fence: number | null;
  data: unknown;
}

/** A write operation: one with a key and an owner. */
export type Write = Op & { key: string; owner: string };

export interface Hold {
  owner: string;
  key: string;
  fence: number | null;
  acquire: Op;
  /** The lease asked for and granted (the smaller), in ns; null when neither is known. */
  ttlNs: number | null;
  /** Renews, releases and writes sent with this owner, in invoke order. */
  renews: readonly Op[];
  releases: readonly Op[];
  writes: readonly Write[];
}

// Most holds never renew, and a history has hundreds of thousands of holds: an
// empty list is shared until the first operation arrives.
const NONE: readonly never[] = Object.freeze([]);
function append<T>(list: readonly T[], item: T): readonly T[] {
  if (list === NONE) return [item];
  (list as T[]).push(item);
  return list;
}

export interface Model {
  header: HistoryHeader;
  events: HistoryEvent[];
  decisions: ResourceDecision[] | null;
  ops: Op[];
  holds: Hold[];
  holdsByKey: Map<string, Hold[]>;
  /** Ok and fail writes, and info ones, per key, in invoke order. */
  writesByKey: Map<string, Write[]>;
  /** Why the history cannot be fully checked; any entry makes the verdict unknown. */
  unknown: string[];
  warnings: string[];
}

export interface RunInput {
  header: HistoryHeader;
  events: HistoryEvent[];
  decisions: ResourceDecision[] | null;
}

const ttlOf = (v: Record<string, unknown> | undefined): number | null => {
  const t = v?.ttl_ms;
  return typeof t === "number" && Number.isFinite(t) && t >= 0 ? t : null;
};

/** The lease of an acquire or renew in ns: the smaller of the TTL asked and granted. */
export function ttlNs(asked: Record<string, unknown> | undefined, granted?: Record<string, unknown>): number | null {
  const a = ttlOf(asked);
  const g = ttlOf(granted);
  const t = a === null ? g : g === null ? a : Math.min(a, g);
  return t === null ? null : t * 1e6;
}

export const fenceOf = (v: Record<string, unknown> | undefined): number | null =>
  typeof v?.fence === "number" && Number.isSafeInteger(v.fence) ? v.fence : null;

/** Pairs invokes with completions; `events` must be in (time, index) order. */
export function pairOps(events: HistoryEvent[]): Op[] {
  const ops: Op[] = [];
  const open = new Map<number, Op>();
  for (const e of events) {
    if (e.process === "nemesis") continue;
    if (e.type === "invoke") {
      const v = e.value;
      const owner = typeof v?.owner === "string" ? v.owner : null;
      const op: Op = { f: e.f, process: e.process, key: e.key, invoke: e, done: null, outcome: "info", start: e.time, end: Infinity, owner, fence: fenceOf(v), data: v?.data };
      open.set(e.process, op);
      ops.push(op);
      continue;
    }
    const op = open.get(e.process);
    // The reader has refused stray completions; one handed in directly is ignored.
    if (!op || op.f !== e.f) continue;
    open.delete(e.process);
    op.done = e;
    op.outcome = e.type;
    op.key ??= e.key;
    if (e.type !== "info") op.end = e.time;
  }
  return ops;
}

const LOCK_OPS = new Set(["acquire", "renew", "release", "write"]);

function listIn<T>(map: Map<string, T[]>, key: string): T[] {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  return list;
}

export function buildModel(input: RunInput): Model {
  const ops = pairOps(input.events);
  const unknown: string[] = [];
  const warnings: string[] = [];
  const holds: Hold[] = [];
  const holdsByKey = new Map<string, Hold[]>();
  // key -> owner -> hold: nested maps spare a joined string per operation.
  const byOwner = new Map<string, Map<string, Hold>>();
  const writesByKey = new Map<string, Write[]>();
  // A hold's operations nearly always come from the process that acquired it.
  const latest = new Map<number, Hold>();
  let keyless = 0;
  let duplicateOwners = 0;
  let orphans = 0;

  for (const op of ops) {
    const key = op.key;
    if (key === undefined) {
      if (LOCK_OPS.has(op.f)) keyless++;
      continue;
    }
    if (op.f === "acquire") {
      if (op.outcome !== "ok") continue;
      const v = op.done?.value;
      const owner = v?.owner;
      if (typeof owner !== "string") continue;
      let owners = byOwner.get(key);
      if (!owners) byOwner.set(key, (owners = new Map()));
      if (owners.has(owner)) {
        duplicateOwners++;
        continue;
      }
      const hold: Hold = { owner, key, fence: fenceOf(v), acquire: op, ttlNs: ttlNs(op.invoke.value, v), renews: NONE, releases: NONE, writes: NONE };
      owners.set(owner, hold);
      latest.set(op.process, hold);
      holds.push(hold);
      listIn(holdsByKey, key).push(hold);
      continue;
    }
    if (op.owner === null || !LOCK_OPS.has(op.f)) continue;
    let hold = latest.get(op.process);
    if (hold?.owner !== op.owner || hold.key !== key) hold = byOwner.get(key)?.get(op.owner);
    if (op.f === "write") {
      listIn(writesByKey, key).push(op as Write);
      if (hold) hold.writes = append(hold.writes, op as Write);
    } else if (!hold) orphans++;
    else if (op.f === "renew") hold.renews = append(hold.renews, op);
    else hold.releases = append(hold.releases, op);
  }

  if (keyless > 0) unknown.push(`${keyless} acquire, renew, release or write operations have no "key"`);
  if (duplicateOwners > 0) unknown.push(`${duplicateOwners} acquires returned an owner already given to another hold of the same key`);
  if (orphans > 0) warnings.push(`${orphans} renews or releases name an owner no acquire returned`);
  return { ...input, ops, holds, holdsByKey, writesByKey, unknown, warnings };
}

/** Every event of these operations, by index, in order. */
export function eventsOf(...ops: (Op | null | undefined)[]): number[] {
  const out: number[] = [];
  for (const op of ops) {
    if (!op) continue;
    out.push(op.invoke.index);
    if (op.done) out.push(op.done.index);
  }
  return [...new Set(out)].sort((a, b) => a - b);
}
