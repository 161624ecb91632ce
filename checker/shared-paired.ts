// What the verdict's second thread (verdict-thread.ts) gets of a paired history,
// and the paired history it rebuilds from it: the operations' and holds' columns where they stand
// in shared memory (table.ts), the names of keys, operations and errors, and
// each key's holds. Owners' names are not sent: a large run has a million of
// them and the thread quotes a handful, in witnesses' explanations. It quotes
// them as tokens that `withOwners` turns into the names once its findings are
// back; only `JSON.stringify` of an owner's name ever reaches an explanation
// (explain.ts), so a token stands for the name as JSON quotes it.
import { Holds, IntList, Interner, Ops } from "./table.ts";
import type { Paired } from "./paired.ts";
import { lockKindOf, type LockKind } from "./linearizable/counted.ts";

type Columns = Record<string, unknown>;

export interface PairedView {
  header: Paired["header"];
  keys: string[];
  fs: string[];
  errors: string[];
  owners: number;
  ops: Columns;
  holds: Columns;
  holdsByKey: [string, Int32Array][];
  events: number;
  firstTime: number;
  lastTime: number;
  /**
   * An rw lock's or a semaphore's kind, for the model check (its read holds are
   * in the acquires' modes, which the thread's paired history lacks); null for a mutex or
   * reentrant lock, whose model check needs none of it.
   */
  lock: LockKind | null;
}

/** An object's fields but `data` (the writes' data, which the thread's analyses do not read). */
function columnsOf(o: object): Columns {
  const out: Columns = {};
  for (const [k, v] of Object.entries(o)) if (k !== "data") out[k] = v;
  return out;
}

/** What the second thread needs of `m`; its columns are shared, not copied. */
export function viewOf(m: Paired): PairedView {
  return {
    header: m.header, keys: m.keys.names, fs: m.fs.names, errors: m.errors.names, owners: m.owners.names.length,
    ops: columnsOf(m.ops), holds: columnsOf(m.holds),
    holdsByKey: [...m.holdsByKey].map(([key, list]) => [key, list.items.slice(0, list.length)]),
    events: m.events, firstTime: m.firstTime, lastTime: m.lastTime,
    lock: m.kind?.lock === "rw" || m.kind?.lock === "semaphore" ? lockKindOf(m) : null,
  };
}

const OPEN_TOKEN = "\uE000", CLOSE_TOKEN = "\uE001";
const TOKEN = /\uE000(\d+)\uE001/g;

function names(list: string[]): Interner {
  return Object.assign(Object.create(Interner.prototype) as Interner, { names: list });
}

/** The paired history `viewOf` gave, in the second thread: for the analyses that read columns, keys and holds. */
export function pairedOf(v: PairedView): Paired {
  const owners = new Proxy([] as string[], {
    get: (target, p) => {
      if (p === "length") return v.owners;
      if (typeof p === "string" && /^\d+$/.test(p) && Number(p) < v.owners) return `${OPEN_TOKEN}${p}${CLOSE_TOKEN}`;
      return Reflect.get(target, p);
    },
  });
  return {
    header: v.header, keys: names(v.keys), owners: names(owners), fs: names(v.fs), errors: names(v.errors),
    ops: Object.assign(Object.create(Ops.prototype) as Ops, v.ops, { data: [] }),
    holds: Object.assign(Object.create(Holds.prototype) as Holds, v.holds),
    holdsByKey: new Map(v.holdsByKey.map(([key, items]) => [key, Object.assign(Object.create(IntList.prototype) as IntList, { items, length: items.length })])),
    writesByKey: new Map(), decisions: null, validity: new Map(),
    events: v.events, firstTime: v.firstTime, lastTime: v.lastTime, nemesis: new Map(), notices: [], protocolErrors: [], unknown: [], warnings: [],
    // The lock kinds' analyses run on the first thread; the holds' spans need only the columns (an inner release is marked in them).
    kind: null,
  };
}

/** `x` (the thread's findings) with every owner token replaced by the owner's name as JSON quotes it. */
export function withOwners<T>(x: T, owners: readonly string[]): T {
  if (typeof x === "string") return (x.includes(OPEN_TOKEN) ? x.replace(TOKEN, (_, id: string) => JSON.stringify(owners[Number(id)]).slice(1, -1)) : x) as T;
  if (Array.isArray(x)) return x.map((y) => withOwners(y, owners)) as T;
  if (typeof x === "object" && x !== null) return Object.fromEntries(Object.entries(x).map(([k, y]) => [k, withOwners(y, owners)])) as T;
  return x;
}
