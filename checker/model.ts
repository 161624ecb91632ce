// What the analyses look at: the history's events paired into operations, the
// holds those operations belong to (by `owner`), the writes per key, and the
// resource's decisions, all in the columns of table.ts. A `ModelBuilder` takes
// the events one at a time, in (time, index) order, and keeps only those columns,
// so a stored run is checked in one streaming pass without holding its events.
import type { HistoryEvent, HistoryHeader, ResourceDecision } from "../store/events.ts";
import { Decisions, FAIL, Holds, INFO, IntList, Interner, OK, Ops } from "./table.ts";

export interface RunInput {
  header: HistoryHeader;
  events: HistoryEvent[];
  decisions: ResourceDecision[] | null;
}

export interface Model {
  header: HistoryHeader;
  /** Names of keys, owners, operations and error codes, by the numbers the columns hold. */
  keys: Interner;
  owners: Interner;
  fs: Interner;
  errors: Interner;
  ops: Ops;
  holds: Holds;
  holdsByKey: Map<string, IntList>;
  /** Writes with an owner (whatever their outcome) per key, in invoke order. */
  writesByKey: Map<string, IntList>;
  /** null when the run has no resource log. */
  decisions: Decisions | null;
  /** Events, and the first and last time, of the history. */
  events: number;
  firstTime: number;
  lastTime: number;
  /** Nemesis events by `f`, in order of first appearance. */
  nemesis: Map<string, number>;
  /** Why the history cannot be fully checked; any entry makes the verdict unknown. */
  unknown: string[];
  warnings: string[];
}

type Value = Record<string, unknown> | undefined;

const ttlOf = (v: Value): number | null => {
  const t = v?.ttl_ms;
  return typeof t === "number" && Number.isFinite(t) && t >= 0 ? t : null;
};

/** The lease of an acquire or renew in ms: the smaller of the TTL asked (NaN: none) and granted. */
function lease(asked: number, granted: number | null): number {
  return granted === null ? asked : Number.isNaN(asked) ? granted : Math.min(asked, granted);
}

const fenceOf = (v: Value): number => (typeof v?.fence === "number" && Number.isSafeInteger(v.fence) ? v.fence : NaN);

const LOCK_OPS = new Set(["acquire", "renew", "release", "write"]);

export class ModelBuilder {
  private readonly m: Model;
  /** The open operation of each process. */
  private readonly open = new Map<number, number>();
  private readonly acquireF: number;

  constructor(header: HistoryHeader) {
    const fs = new Interner();
    this.acquireF = fs.id("acquire");
    this.m = {
      header, keys: new Interner(), owners: new Interner(), fs, errors: new Interner(),
      ops: new Ops(), holds: new Holds(), holdsByKey: new Map(), writesByKey: new Map(), decisions: null,
      events: 0, firstTime: 0, lastTime: 0, nemesis: new Map(), unknown: [], warnings: [],
    };
  }

  /** Takes the next event; events must come in (time, index) order. */
  readonly event = (e: HistoryEvent): void => {
    const m = this.m;
    if (m.events++ === 0) m.firstTime = e.time;
    m.lastTime = e.time;
    if (e.process === "nemesis") {
      m.nemesis.set(e.f, (m.nemesis.get(e.f) ?? 0) + 1);
      return;
    }
    const ops = m.ops;
    const v = e.value;
    if (e.type === "invoke") {
      const i = ops.add();
      ops.f[i] = m.fs.id(e.f);
      ops.process[i] = e.process;
      ops.key[i] = e.key === undefined ? -1 : m.keys.id(e.key);
      ops.invoke[i] = e.index;
      ops.done[i] = -1;
      ops.start[i] = e.time;
      ops.doneTime[i] = NaN;
      ops.end[i] = Infinity;
      ops.outcome[i] = INFO;
      ops.error[i] = -1;
      ops.owner[i] = typeof v?.owner === "string" ? m.owners.id(v.owner) : -1;
      ops.fence[i] = fenceOf(v);
      ops.ttl[i] = ttlOf(v) ?? NaN;
      ops.notReleased[i] = 0;
      ops.hold[i] = -1;
      ops.next[i] = -1;
      ops.data.push(v?.data);
      this.open.set(e.process, i);
      return;
    }
    const i = this.open.get(e.process);
    // The reader has refused stray completions; one handed in directly is ignored.
    if (i === undefined || m.fs.names[ops.f[i]] !== e.f) return;
    this.open.delete(e.process);
    ops.done[i] = e.index;
    ops.doneTime[i] = e.time;
    ops.outcome[i] = e.type === "ok" ? OK : e.type === "fail" ? FAIL : INFO;
    if (e.type !== "info") ops.end[i] = e.time;
    if (e.error !== undefined) ops.error[i] = m.errors.id(e.error);
    if (ops.key[i] < 0 && e.key !== undefined) ops.key[i] = m.keys.id(e.key);
    if (e.type !== "ok") return;
    if (ops.f[i] === this.acquireF) {
      ops.owner[i] = typeof v?.owner === "string" ? m.owners.id(v.owner) : -1;
      ops.fence[i] = fenceOf(v);
      ops.ttl[i] = lease(ops.ttl[i], ttlOf(v));
    } else if (e.f === "renew") ops.ttl[i] = lease(ops.ttl[i], ttlOf(v));
    else if (e.f === "release" && v?.released === false) ops.notReleased[i] = 1;
  };

  /** Takes the next decision of resource.ndjson, in log order. */
  readonly decision = (d: ResourceDecision): void => {
    const m = this.m;
    const ds = (m.decisions ??= new Decisions());
    const i = ds.add();
    ds.seq[i] = d.seq;
    ds.time[i] = d.time;
    ds.write[i] = d.op === "write" ? 1 : 0;
    ds.key[i] = m.keys.id(d.key);
    ds.process[i] = d.process;
    ds.owner[i] = m.owners.id(d.owner);
    ds.fence[i] = d.fence ?? NaN;
    ds.maxBefore[i] = d.max_before ?? NaN;
    ds.accepted[i] = d.accepted ? 1 : 0;
    ds.data.push(d.data);
  };

  /** A resource log that exists but is empty still says the resource ran. */
  noteResourceLog(): void {
    this.m.decisions ??= new Decisions();
  }

  /** Groups the operations into holds and writes per key; call once, after the last event. */
  finish(): Model {
    const m = this.m;
    const { ops, holds } = m;
    const keyName = m.keys.names;
    const fName = m.fs.names;
    // key -> owner -> hold: per key, since one owner id could (wrongly) appear on two keys.
    const byOwner: Map<number, number>[] = [];
    const holdsOf: IntList[] = [];
    const writesOf: IntList[] = [];
    // A hold's operations nearly always come from the process that acquired it.
    const latest = new Map<number, number>();
    let keyless = 0;
    let duplicateOwners = 0;
    let orphans = 0;

    for (let i = 0; i < ops.length; i++) {
      const key = ops.key[i];
      const f = fName[ops.f[i]];
      if (key < 0) {
        if (LOCK_OPS.has(f)) keyless++;
        continue;
      }
      const owner = ops.owner[i];
      if (f === "acquire") {
        if (ops.outcome[i] !== OK || owner < 0) continue;
        const owners = (byOwner[key] ??= new Map());
        if (owners.has(owner)) {
          duplicateOwners++;
          continue;
        }
        const h = holds.add();
        holds.key[h] = key;
        holds.owner[h] = owner;
        holds.fence[h] = ops.fence[i];
        holds.acquire[h] = i;
        holds.ttl[h] = ops.ttl[i];
        holds.first[h] = -1;
        holds.last[h] = -1;
        ops.hold[i] = h;
        owners.set(owner, h);
        latest.set(ops.process[i], h);
        if (!holdsOf[key]) m.holdsByKey.set(keyName[key], (holdsOf[key] = new IntList()));
        holdsOf[key].push(h);
        continue;
      }
      if (owner < 0 || !LOCK_OPS.has(f)) continue;
      let h = latest.get(ops.process[i]) ?? -1;
      if (h < 0 || holds.owner[h] !== owner || holds.key[h] !== key) h = byOwner[key]?.get(owner) ?? -1;
      if (f === "write") {
        if (!writesOf[key]) m.writesByKey.set(keyName[key], (writesOf[key] = new IntList()));
        writesOf[key].push(i);
      } else if (h < 0) orphans++;
      if (h < 0) continue;
      ops.hold[i] = h;
      if (holds.last[h] < 0) holds.first[h] = i;
      else ops.next[holds.last[h]] = i;
      holds.last[h] = i;
    }

    if (keyless > 0) m.unknown.push(`${keyless} acquire, renew, release or write operations have no "key"`);
    if (duplicateOwners > 0) m.unknown.push(`${duplicateOwners} acquires returned an owner already given to another hold of the same key`);
    if (orphans > 0) m.warnings.push(`${orphans} renews or releases name an owner no acquire returned`);
    return m;
  }
}

/** Builds the model of a history already in memory; `events` must be in (time, index) order. */
export function buildModel(input: RunInput): Model {
  const b = new ModelBuilder(input.header);
  for (const e of input.events) b.event(e);
  if (input.decisions) {
    b.noteResourceLog();
    for (const d of input.decisions) b.decision(d);
  }
  return b.finish();
}

/** The operations of a hold after its acquire (renews, releases, writes), in invoke order, whose `f` is `f`. */
export function* holdOps(m: Model, h: number, f: string): Generator<number> {
  const want = m.fs.names.indexOf(f);
  for (let i = m.holds.first[h]; i >= 0; i = m.ops.next[i]) if (m.ops.f[i] === want) yield i;
}

/** Every event index of these operations (-1: none), in order. */
export function eventsOf(m: Model, ...ops: number[]): number[] {
  const out: number[] = [];
  for (const i of ops) {
    if (i < 0) continue;
    out.push(m.ops.invoke[i]);
    if (m.ops.done[i] >= 0) out.push(m.ops.done[i]);
  }
  return [...new Set(out)].sort((a, b) => a - b);
}
