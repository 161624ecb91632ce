// What the analyses look at: the history's events paired into operations, the
// holds those operations belong to (by `owner`), the writes per key, and the
// resource's decisions, all in the columns of table.ts. A `PairingBuilder` takes
// the events one at a time, in (time, index) order, and keeps only those columns,
// so a stored run is checked in one streaming pass without holding its events.
import { clientOp, CLIENT_OPS, emptyFields, fieldsOf, INVOKE_TYPE, type EventFields } from "../store/event-fields.ts";
import { FORMAT_2, leaseMs, type HistoryEvent, type HistoryHeader, type ResourceDecision } from "../store/events.ts";
import type { ProtocolError } from "../store/protocol-errors.ts";
import { BadInput } from "../lib/exit.ts";
import { orderOf } from "./sweep.ts";
import { ACCEPTED, Decisions, FAIL, Holds, INFO, IntList, Interner, OK, Ops, ProcessSlots, REFUSED, UNDECIDED } from "./table.ts";

/** A notice line, as the analyses read it. */
export interface Notice {
  index: number;
  time: number;
  process: number;
  f: string;
  key: string | undefined;
  /** The hold it names; undefined when the library named none. */
  owner: string | undefined;
}

export interface RunInput {
  header: HistoryHeader;
  events: HistoryEvent[];
  decisions: ResourceDecision[] | null;
  /** protocol-errors.ndjson's lines (absent: none recorded). */
  protocolErrors?: ProtocolError[];
}

export interface Paired {
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
  /** Acquires that completed ok with a `validity_ms` from their client: the operation and that figure (few clients report it). */
  validity: Map<number, number>;
  /** Events, and the first and last time, of the history. */
  events: number;
  firstTime: number;
  lastTime: number;
  /** Nemesis events by `f`, in order of first appearance. */
  nemesis: Map<string, number>;
  /** The notice lines (format 2): what the lock library told its user, in time order. */
  notices: Notice[];
  /** Format 2's lock kinds: what the analyses of reentrant, rw and semaphore locks and of withdrawn waits read (null: a format 1 history). */
  kind: LockFacts | null;
  /** The codes of the run's adapter protocol errors (protocol-errors.ndjson), beside the history: some left no line in it. */
  protocolErrors: string[];
  /** Instants moved within clock bounds (clock.ts): the history's proofs of write order from times are not made where there is a log. */
  clockPlaced?: boolean;
  /** Why the history cannot be fully checked; any entry makes the verdict unknown. */
  unknown: string[];
  warnings: string[];
}

/**
 * What a format 2 history says beyond a mutex's, by operation: few of a run's
 * operations carry any of it, so maps, filled only for a format 2 history.
 */
export interface LockFacts {
  lock: "mutex" | "reentrant" | "rw" | "semaphore";
  /** A semaphore's permits (1 for the others). */
  permits: number;
  /** What the client promises of a re-entry's fence ("same", "new"), where the header says. */
  fenceOnReentry: "same" | "new" | null;
  /** Acquires' modes (MODE_READ, MODE_WRITE), by operation. */
  mode: Map<number, number>;
  /** Acquires' and releases' depths (reentrant), by operation. */
  depth: Map<number, number>;
  /** Acquire completions' `behind` (whose queue entry it waited behind), by operation. */
  behind: Map<number, string>;
  /** A failed or unknown acquire's `owner` (the queue entry it was made for), by operation. */
  entry: Map<number, string>;
}

/** A release of a re-entry (depth above 1): it lowers the owner's count and frees nothing (ops.notReleased). */
export const INNER_RELEASE = 2;

function lockFacts(header: HistoryHeader): LockFacts {
  const lock = (header.lock as LockFacts["lock"] | undefined) ?? "mutex";
  const reentry = header.fence_on_reentry;
  return {
    lock, permits: lock === "semaphore" ? (header.permits as number) : 1, fenceOnReentry: reentry === "same" || reentry === "new" ? reentry : null,
    mode: new Map(), depth: new Map(), behind: new Map(), entry: new Map(),
  };
}

/** Ids of the client operations docs/history-format.md defines (their places in CLIENT_OPS), fixed so the hot loop compares numbers. */
export const ACQUIRE = 0;
export const RENEW = 1;
export const RELEASE = 2;
export const WRITE = 3;
export const READ = 4;

export class PairingBuilder {
  private readonly m: Paired;
  /** The open operation of each process. */
  private readonly open = new ProcessSlots();
  /** Per process, the owners it was granted first and last, last sent, and last seen in the resource log. */
  private readonly firstGranted = new ProcessSlots();
  private readonly lastGranted = new ProcessSlots();
  private readonly lastSent = new ProcessSlots();
  private readonly lastLogged = new ProcessSlots();
  /** Per owner, the next owner granted to the same process (-1: none yet). */
  private nextOwner = new Int32Array(0);

  /**
   * `expectedOps` sizes the columns up front (e.g. from the file's size); it is only
   * a hint. `writeData` false leaves the data of the history's writes out: a run
   * with a resource log has it in the decisions, which every analysis then reads
   * instead, and a second copy of every write's data kept alive costs a
   * two-million-event run about a tenth of a second of garbage collection.
   */
  constructor(header: HistoryHeader, expectedOps = 1024, private readonly writeData = true) {
    const fs = new Interner();
    for (const f of CLIENT_OPS) fs.id(f);
    this.m = {
      header, keys: new Interner(), owners: new Interner(expectedOps >> 2), fs, errors: new Interner(),
      ops: new Ops(expectedOps), holds: new Holds(Math.ceil(expectedOps / 3)), holdsByKey: new Map(), writesByKey: new Map(), decisions: null, validity: new Map(),
      events: 0, firstTime: 0, lastTime: 0, nemesis: new Map(), notices: [], protocolErrors: [], unknown: [], warnings: [],
      kind: header.format === 2 ? lockFacts(header) : null,
    };
    this.facts = this.m.kind;
  }
  /** m.kind, where a format 2 history's lock-kind fields go (null: none to look for). */
  private readonly facts: LockFacts | null;

  private fId(f: string): number {
    const op = clientOp(f);
    return op >= 0 ? op : this.m.fs.id(f);
  }

  private keyId(key: string): number {
    // Runs have a handful of keys: comparing them beats hashing the string.
    const names = this.m.keys.names;
    if (names.length <= 16) for (let i = 0; i < names.length; i++) if (names[i] === key) return i;
    // Thousands at most: a Map, which hashes each string once (the Interner hashes
    // it at every lookup, which pays for owners, hundreds of thousands of them).
    let id = this.keyIds.get(key);
    if (id === undefined) this.keyIds.set(key, (id = this.m.keys.id(key)));
    return id;
  }
  private readonly keyIds = new Map<string, number>();

  /** The key of an invoke, tried first against the process's last: a hold's renews, writes and release name the key its acquire did. */
  private keyOf(process: number, key: string): number {
    const last = this.lastKey.get(process);
    if (last >= 0 && this.m.keys.names[last] === key) return last;
    const id = this.keyId(key);
    this.lastKey.set(process, id);
    return id;
  }
  private readonly lastKey = new ProcessSlots();

  // Owners are looked up by name three ways, each trying first where the owner
  // nearly always is, since a map lookup per operation is the builder's main cost.

  /** An acquire's ok: a new owner, chained after the process's previous one. */
  private grantedOwner(process: number, owner: string): number {
    const owners = this.m.owners;
    const before = owners.names.length;
    const id = owners.id(owner);
    if (id === before) {
      if (id === this.nextOwner.length) {
        const bigger = new Int32Array(Math.max(1024, id * 2)).fill(-1);
        bigger.set(this.nextOwner);
        this.nextOwner = bigger;
      }
      const prev = this.lastGranted.get(process);
      if (prev >= 0) this.nextOwner[prev] = id;
      else this.firstGranted.set(process, id);
      this.lastGranted.set(process, id);
    }
    this.lastSent.set(process, id);
    return id;
  }

  /** A renew, release or write: sent by the process for the hold it last acquired. */
  private sentOwner(process: number, owner: string): number {
    const id = this.lastSent.get(process);
    if (id >= 0 && this.m.owners.names[id] === owner) return id;
    const found = this.m.owners.id(owner);
    this.lastSent.set(process, found);
    return found;
  }

  /** A resource decision: for the process's hold of its last decision, or one of the next. */
  private loggedOwner(process: number, owner: string): number {
    const names = this.m.owners.names;
    let id = this.lastLogged.get(process);
    if (id < 0) id = this.firstGranted.get(process);
    for (let step = 0; step < 4 && id >= 0; step++, id = this.nextOwner[id]) {
      if (names[id] === owner) {
        this.lastLogged.set(process, id);
        return id;
      }
    }
    id = this.m.owners.id(owner);
    this.lastLogged.set(process, id);
    return id;
  }

  /** Takes the next event, in (time, index) order; `e` is only read during the call. */
  readonly event = (e: EventFields): void => {
    const m = this.m;
    const time = e.time;
    if (m.events++ === 0) m.firstTime = time;
    m.lastTime = time;
    if (e.nemesis) {
      m.nemesis.set(e.f, (m.nemesis.get(e.f) ?? 0) + 1);
      return;
    }
    if (e.notice) {
      // The readers refuse a notice in a format 1 history where they know its line; a stripe of a large file is read without the header.
      if (m.header.format !== 2) throw new BadInput(`history.ndjson: event ${e.index} is a notice, which needs a format 2 history (the header says format ${m.header.format})`);
      m.notices.push({ index: e.index, time, process: e.process, f: e.f, key: e.key, owner: e.owner });
      return;
    }
    const process = e.process;
    const ops = m.ops;
    if (!Ops.fits(e.index) || !Ops.fits(process)) ops.widen();
    if (e.type === INVOKE_TYPE) {
      const i = ops.add();
      const key = e.key;
      const owner = e.owner;
      const f = this.fId(e.f);
      ops.f[i] = f;
      ops.process[i] = process;
      ops.key[i] = key === undefined ? -1 : this.keyOf(process, key);
      ops.invoke[i] = e.index;
      ops.done[i] = -1;
      ops.start[i] = time;
      ops.doneTime[i] = NaN;
      ops.outcome[i] = INFO;
      ops.error[i] = -1;
      ops.owner[i] = owner === undefined ? -1 : this.sentOwner(process, owner);
      ops.setFence(i, f === ACQUIRE ? NaN : e.fence);
      ops.setTtl(i, f === ACQUIRE || f === RENEW || f > READ ? e.ttl : NaN);
      ops.notReleased[i] = 0;
      ops.hold[i] = -1;
      ops.next[i] = -1;
      if (this.writeData) ops.data.push(e.data);
      this.open.set(process, i);
      if (this.facts !== null) {
        if (e.mode !== 0) this.facts.mode.set(i, e.mode);
        if (!Number.isNaN(e.depth)) this.facts.depth.set(i, e.depth);
      }
      return;
    }
    const i = this.open.get(process);
    // The reader has refused stray completions; one handed in directly is ignored.
    if (i < 0 || ops.f[i] !== this.fId(e.f)) return;
    this.open.set(process, -1);
    const type = e.type;
    ops.done[i] = e.index;
    ops.doneTime[i] = time;
    ops.outcome[i] = type === OK || type === FAIL ? type : INFO;
    if (e.error !== undefined) ops.error[i] = m.errors.id(e.error);
    if (ops.key[i] < 0 && e.key !== undefined) ops.key[i] = this.keyId(e.key);
    if (this.facts !== null && ops.f[i] === ACQUIRE) {
      if (e.behind !== undefined) this.facts.behind.set(i, e.behind);
      if (type !== OK && e.owner !== undefined) this.facts.entry.set(i, e.owner);
    }
    if (type !== OK) return;
    const f = ops.f[i];
    if (f === ACQUIRE) {
      ops.owner[i] = e.owner === undefined ? -1 : this.grantedOwner(process, e.owner);
      ops.setFence(i, e.fence);
      ops.setTtl(i, leaseMs(ops.ttl[i], e.ttl));
      if (!Number.isNaN(e.queued)) ops.setQueued(i, e.queued);
      if (!Number.isNaN(e.validity)) m.validity.set(i, e.validity);
    } else if (f === RENEW) ops.setTtl(i, leaseMs(ops.ttl[i], e.ttl));
    else if (f === RELEASE && e.notReleased) ops.notReleased[i] = 1;
  };

  /** Takes the next decision of resource.ndjson, in log order. */
  readonly decision = (d: ResourceDecision): void => {
    const m = this.m;
    const ds = (m.decisions ??= new Decisions(this.expectedDecisions));
    const i = ds.add();
    ds.setSeq(i, d.seq);
    ds.time[i] = d.time;
    ds.write[i] = d.op === "write" ? 1 : 0;
    ds.key[i] = this.keyId(d.key);
    ds.setProcess(i, d.process);
    ds.owner[i] = this.loggedOwner(d.process, d.owner);
    ds.setFence(i, d.fence ?? NaN);
    ds.setMaxBefore(i, d.max_before ?? NaN);
    ds.accepted[i] = d.accepted === null ? UNDECIDED : d.accepted ? ACCEPTED : REFUSED;
    ds.fencing[i] = d.fencing ? 1 : 0;
    ds.data.push(d.data);
    if (d.order !== undefined && d.order !== null) {
      ds.order[i] = d.order;
      ds.ordered = true;
    }
    // Committed decisions are format 2's: a format-1 run's log is in the order decisions took effect, each one known.
    if (this.m.header.format !== FORMAT_2 && (d.accepted === null || d.order !== undefined))
      throw new BadInput(`resource.ndjson seq ${d.seq}: ${d.accepted === null ? `"accepted": null` : `"order"`} needs a format 2 history (history.ndjson's header says format ${this.m.header.format})`);
  };

  /** Says the run has a resource log (an empty one too), of about `expected` decisions. */
  noteResourceLog(expected = 1024): void {
    this.expectedDecisions = expected;
    this.m.decisions ??= new Decisions(expected);
  }
  private expectedDecisions = 1024;

  /** The run's recorded protocol errors, read from beside the history. */
  noteProtocolErrors(errors: readonly Pick<ProtocolError, "code">[]): void {
    this.m.protocolErrors = errors.map((e) => e.code);
  }

  /**
   * The paired history, done: groups the operations (unless `group` did) and lets go of the
   * builder's own lookups. Call once, after the last event and decision.
   */
  finish(): Paired {
    const m = this.group();
    m.owners.seal();
    // The builder's own lookups are done with: a caller may hold on to it while the analyses run.
    this.nextOwner = new Int32Array(0);
    return m;
  }
  private grouped = false;

  /**
   * Groups the operations into holds and writes per key, once, after the last event:
   * all the analyses of the operations and holds alone need (a thread may start on
   * them while the decisions are read). It is not done until `finish`.
   */
  group(): Paired {
    const m = this.m;
    if (this.grouped) return m;
    this.grouped = true;
    const { ops, holds } = m;
    const keyName = m.keys.names;
    // owner -> its hold; an owner (wrongly) seen on a second key goes to `elsewhere`.
    const holdOf = new Int32Array(m.owners.names.length).fill(-1);
    const elsewhere = new Map<string, number>();
    const find = (key: number, owner: number): number => {
      const h = holdOf[owner];
      if (h < 0 || holds.key[h] === key) return h;
      return elsewhere.get(`${key}:${owner}`) ?? -1;
    };
    const holdsOf: IntList[] = [];
    const writesOf: IntList[] = [];
    // Each key's holds (at most) and writes counted first, so that its lists are
    // made once at their size: thousands of keys' lists grown by doubling cost
    // more than this pass.
    const holdsAt = new Int32Array(keyName.length), writesAt = new Int32Array(keyName.length);
    for (let i = 0; i < ops.length; i++) {
      const key = ops.key[i];
      if (key < 0 || ops.owner[i] < 0) continue;
      if (ops.f[i] === ACQUIRE) {
        if (ops.outcome[i] === OK) holdsAt[key]++;
      } else if (ops.f[i] === WRITE) writesAt[key]++;
    }
    // A hold's operations nearly always come from the process that acquired it.
    const latest = new ProcessSlots();
    // A reentrant lock's re-entries are operations of their outermost hold, and
    // their releases free nothing (INNER_RELEASE).
    const depths = m.kind?.lock === "reentrant" ? m.kind.depth : null;
    const reentry = (i: number): boolean => depths !== null && (depths.get(i) ?? 1) > 1;
    let keyless = 0;
    let duplicateOwners = 0;
    let orphans = 0;

    for (let i = 0; i < ops.length; i++) {
      const key = ops.key[i];
      const f = ops.f[i];
      const lockOp = f <= WRITE;
      if (key < 0) {
        if (lockOp) keyless++;
        continue;
      }
      const owner = ops.owner[i];
      if (f === ACQUIRE && !reentry(i)) {
        if (ops.outcome[i] !== OK || owner < 0) continue;
        // An owner given to a hold of the key before (a client's counter that
        // started again): the run is UNKNOWN, and the owner's later operations go
        // to this, its latest hold, as they most likely are.
        const again = find(key, owner) >= 0;
        if (again) duplicateOwners++;
        const h = holds.add();
        holds.key[h] = key;
        holds.owner[h] = owner;
        holds.setFence(h, ops.fence[i]);
        holds.acquire[h] = i;
        holds.setTtl(h, ops.ttl[i]);
        holds.first[h] = -1;
        holds.last[h] = -1;
        ops.hold[i] = h;
        if (holdOf[owner] < 0 || (again && holds.key[holdOf[owner]] === key)) holdOf[owner] = h;
        else elsewhere.set(`${key}:${owner}`, h);
        latest.set(ops.process[i], h);
        if (!holdsOf[key]) m.holdsByKey.set(keyName[key], (holdsOf[key] = new IntList(holdsAt[key])));
        holdsOf[key].push(h);
        continue;
      }
      if (owner < 0 || !lockOp) continue;
      if (f === RELEASE && reentry(i)) ops.notReleased[i] = INNER_RELEASE;
      let h = latest.get(ops.process[i]);
      if (h < 0 || holds.owner[h] !== owner || holds.key[h] !== key) h = find(key, owner);
      if (f === WRITE) {
        if (!writesOf[key]) m.writesByKey.set(keyName[key], (writesOf[key] = new IntList(writesAt[key])));
        writesOf[key].push(i);
      } else if (h < 0 && f !== ACQUIRE) orphans++; // (a re-entry of no hold is a reentrancy-violation: checker/kinds)
      if (h < 0) continue;
      ops.hold[i] = h;
      if (holds.last[h] < 0) holds.first[h] = i;
      else ops.next[holds.last[h]] = i;
      holds.last[h] = i;
    }

    if (keyless > 0) m.unknown.push(`${keyless} acquire, renew, release or write operations have no "key"`);
    if (duplicateOwners > 0) m.unknown.push(`${duplicateOwners} acquires returned an owner already given to another hold of the same key`);
    if (orphans > 0) m.warnings.push(`${orphans} renews or releases name an owner no acquire returned`);
    holds.allAdded();
    return m;
  }
}

/** Pairs a history already in memory; `events` must be in (time, index) order. */
export function pairRun(input: RunInput): Paired {
  const b = new PairingBuilder(input.header, input.events.length >> 1);
  const fields = emptyFields();
  for (const e of input.events) b.event(fieldsOf(e, fields));
  if (input.decisions) {
    b.noteResourceLog();
    for (const d of input.decisions) b.decision(d);
  }
  if (input.protocolErrors) b.noteProtocolErrors(input.protocolErrors);
  return b.finish();
}

/** The operations of a hold after its acquire (renews, releases, writes), in invoke order, whose `f` is `f`. */
export function* holdOps(m: Paired, h: number, f: number): Generator<number> {
  for (let i = m.holds.first[h]; i >= 0; i = m.ops.next[i]) if (m.ops.f[i] === f) yield i;
}

/** Every event index of these operations (-1: none), in order. */
export function eventsOf(m: Paired, ...ops: number[]): number[] {
  const out: number[] = [];
  for (const i of ops) {
    if (i < 0) continue;
    out.push(m.ops.invoke[i]);
    if (m.ops.done[i] >= 0) out.push(m.ops.done[i]);
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

/**
 * Every hold in order of its acquire's completion (equal times in hold order), and
 * those completion times by hold. The order is made once per paired history, by whichever
 * thread asks first, in a column both threads of a verdict share (table.ts
 * Holds.endOrder): the second thread asks first thing, so the checking thread,
 * which asks later, finds it made (a third of a million holds take tens of ms to
 * sort in code that runs once).
 */
export function holdsInEndOrder(m: Paired): { order: Int32Array; ends: Float64Array } {
  const { holds, ops } = m;
  const ends = new Float64Array(holds.length);
  for (let h = 0; h < holds.length; h++) ends[h] = ops.endOf(holds.acquire[h]);
  if (Atomics.load(holds.endOrderMade, 0) === 1) return { order: holds.endOrder, ends };
  const order = orderOf(ends);
  // Both threads may get here at once: they write the same numbers.
  holds.endOrder.set(order);
  Atomics.store(holds.endOrderMade, 0, 1);
  return { order, ends };
}

const endOrders = new WeakMap<Paired, Map<string, Int32Array>>();

/**
 * A key's holds in order of their acquire's completion (equal times in hold
 * order): holdsInEndOrder's order, each key's holds taken out of it in one pass,
 * once per paired history.
 */
export function holdsByAcquireEnd(m: Paired, key: string): Int32Array {
  let byKey = endOrders.get(m);
  if (!byKey) {
    const { holds } = m;
    const { order } = holdsInEndOrder(m);
    const sizes = new Int32Array(m.keys.names.length);
    for (let h = 0; h < holds.length; h++) sizes[holds.key[h]]++;
    const lists = Array.from(sizes, (n) => new Int32Array(n));
    const filled = new Int32Array(sizes.length);
    for (const h of order) lists[holds.key[h]][filled[holds.key[h]]++] = h;
    byKey = new Map();
    for (let k = 0; k < lists.length; k++) if (sizes[k] > 0) byKey.set(m.keys.names[k], lists[k]);
    endOrders.set(m, byKey);
  }
  return byKey.get(key)!;
}
