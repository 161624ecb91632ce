// The model check of the lock service: each key's acquires, renews and releases
// searched for an order that a fenced mutex could have produced (wgl.ts over
// fenced-mutex.ts), within one time budget for the whole run. A key with no such
// order yields a witness: the operation the search could not get past, the state
// it was in, and why the mutex refuses it there.
import type { Witness } from "../../store/events.ts";
import { ms, quoteAcquire, quoteOp } from "../explain.ts";
import { ACQUIRE as ACQUIRE_F, eventsOf, RELEASE as RELEASE_F, RENEW as RENEW_F, type Model } from "../model.ts";
import { FAIL, INFO, OK, OUTCOMES } from "../table.ts";
import { ACQUIRE, mutexHistories, mutexModel, NOT_RELEASED, RELEASE_OK, type MutexHistory } from "./fenced-mutex.ts";
import { search } from "./wgl.ts";

export const MODEL_NAME = "fenced-mutex";
/** The whole run's model check stops here and says which keys it did not finish. */
export const DEFAULT_BUDGET_MS = 10_000;
const MAX_MEMO = 1 << 21;
/** Steps the first search, without the memo, may take: a few per operation. */
const QUICK_STEPS_PER_OP = 4;
const QUICK_STEPS = 10_000;

export interface ModelCheckStats {
  model: typeof MODEL_NAME;
  result: "linearizable" | "not-linearizable" | "unknown";
  keys: { checked: number; linearizable: number; not_linearizable: number; unknown: number };
  /** Operations searched, and those left out and why (see fenced-mutex.ts). */
  operations: number;
  left_out: { failed: number; unknown_acquires: number; unknown_renews: number };
  search_steps: number;
  elapsed_ms: number;
  budget_ms: number;
  /** Keys whose search did not finish, and why. */
  unknown_keys: { key: string; reason: string }[];
}

export interface ModelCheck {
  witnesses: Witness[];
  stats: ModelCheckStats;
}

export function checkModel(m: Model, budgetMs = DEFAULT_BUDGET_MS): ModelCheck {
  const started = performance.now();
  const deadline = started + budgetMs;
  const witnesses: Witness[] = [];
  const keys = { checked: 0, linearizable: 0, not_linearizable: 0, unknown: 0 };
  const unknownKeys: ModelCheckStats["unknown_keys"] = [];
  let operations = 0;
  let steps = 0;
  for (const h of mutexHistories(m)) {
    const key = h.key;
    keys.checked++;
    operations += h.length;
    if (performance.now() > deadline) {
      keys.unknown++;
      unknownKeys.push({ key, reason: "not searched: the time budget ran out on earlier keys" });
      continue;
    }
    const model = mutexModel(h);
    // Without the memo each step costs half as much, and a correct history needs
    // little backtracking; a search that backtracks a lot starts over with it.
    const quick = search(h, model, { deadline, maxMemo: 0, maxSteps: QUICK_STEPS_PER_OP * h.length + QUICK_STEPS });
    steps += quick.steps;
    const r = quick.kind !== "unknown" || performance.now() > deadline ? quick : search(h, model, { deadline, maxMemo: MAX_MEMO });
    if (r !== quick) steps += r.steps;
    if (r.kind === "linearizable") keys.linearizable++;
    else if (r.kind === "unknown") {
      keys.unknown++;
      unknownKeys.push({ key, reason: r.reason });
    } else {
      keys.not_linearizable++;
      witnesses.push(witness(m, h, model, r.deepest));
    }
  }
  const result = keys.not_linearizable > 0 ? "not-linearizable" : keys.unknown > 0 ? "unknown" : "linearizable";
  return {
    witnesses,
    stats: {
      model: MODEL_NAME, result, keys, operations, left_out: leftOut(m), search_steps: steps,
      elapsed_ms: Math.round(performance.now() - started), budget_ms: budgetMs, unknown_keys: unknownKeys,
    },
  };
}

function leftOut(m: Model): ModelCheckStats["left_out"] {
  const o = m.ops;
  const out = { failed: 0, unknown_acquires: 0, unknown_renews: 0 };
  for (let i = 0; i < o.length; i++) {
    const f = o.f[i];
    if (o.key[i] < 0 || (f !== ACQUIRE_F && f !== RENEW_F && f !== RELEASE_F)) continue;
    if (o.outcome[i] === FAIL) out.failed++;
    else if (o.outcome[i] === INFO && f === ACQUIRE_F) out.unknown_acquires++;
    else if (o.outcome[i] === INFO && f === RENEW_F) out.unknown_renews++;
  }
  return out;
}

type Deepest = { taken: number; state: number; last: number; blocked: number };

/**
 * Knossos's kind of witness: the operation the search could not get past, in the
 * furthest order it found, and why the mutex refuses it there: who held the lock
 * then and why that hold had not ended by the operation's completion.
 */
function witness(m: Model, h: MutexHistory, model: ReturnType<typeof mutexModel>, deepest: Deepest): Witness {
  const o = m.ops;
  const holder = model.holder(deepest.state);
  const fenced = model.fenced(deepest.state);
  const b = deepest.blocked;
  const row = (i: number): number => h.row[i];
  const acquireRow = (j: number): number => m.holds.acquire[h.holds[j]];
  const quote = (i: number): string => (h.kind[i] === ACQUIRE ? quoteAcquire(m, h.holds[h.hold[i]]) : quoteOp(m, row(i), `owner ${JSON.stringify(m.owners.names[m.holds.owner[h.holds[h.hold[i]]]])}`));
  const j = h.hold[b];
  const until = `by its ${OUTCOMES[o.outcome[row(b)]]} at ${ms(o.doneTime[row(b)])}`;
  const related: number[] = [row(b)];
  let why: string;
  if (h.kind[b] === ACQUIRE && holder >= 0) {
    related.push(acquireRow(holder));
    const rel = releasesOf(h, holder);
    related.push(...rel.map(row));
    const ended = rel.length === 0 ? "and no release of that hold ended it"
      : `and that hold's release #${o.invoke[row(rel[0])]} was invoked only at ${ms(o.start[row(rel[0])])}${h.ret[rel[0]] < 0 ? " (its outcome unknown)" : ""}`;
    why = `the lock was held by the hold of ${quoteAcquire(m, h.holds[holder])}, ${ended}${leaseNote(m, h.holds[holder], o.doneTime[row(b)])}`;
  } else if (h.kind[b] === ACQUIRE) {
    related.push(acquireRow(fenced));
    why = `its fence ${h.fences[j]} is not above fence ${h.fences[fenced]}, granted before it by ${quoteAcquire(m, h.holds[fenced])}`;
  } else if (h.kind[b] === NOT_RELEASED) {
    related.push(acquireRow(j));
    why = `it answered that the lock was no longer its hold's, yet no other acquire can have taken the lock from that hold (${quoteAcquire(m, h.holds[j])})`;
  } else {
    related.push(acquireRow(j));
    if (holder >= 0) related.push(acquireRow(holder));
    why = `its hold no longer held the lock: ${holder >= 0 ? `the hold of ${quoteAcquire(m, h.holds[holder])} did` : "it was free"}`;
  }
  const last = deepest.last;
  const context = last >= 0 && row(last) !== related[1]
    ? ` (the last operation to take effect before it was ${quoteOp(m, row(last))})`
    : "";
  if (last >= 0) related.push(row(last));
  return {
    key: h.key,
    events: eventsOf(m, ...related),
    explanation:
      `On key ${JSON.stringify(h.key)} no order of the acquires, renews and releases that respects real time is one a mutex allows. ` +
      `${capital(quote(b))} must have taken effect ${until}, but in the furthest such order the search found, ` +
      `${deepest.taken} of ${h.length} operations in${context}, ${why}. ` +
      `A mutex grants no lock that is held; a lease service does once the lease runs out, so only --model strict counts this.`,
  };
}

function releasesOf(h: MutexHistory, j: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < h.length; i++) if (h.hold[i] === j && (h.kind[i] === RELEASE_OK || h.kind[i] === NOT_RELEASED)) out.push(i);
  return out;
}

/** Whether the hold's lease (from its acquire or last ok renew, both invoked) had run out by `at`. */
function leaseNote(m: Model, hold: number, at: number): string {
  const o = m.ops;
  let from = o.start[m.holds.acquire[hold]];
  let ttl = m.holds.ttl[hold];
  for (let r = m.holds.first[hold]; r >= 0; r = o.next[r]) {
    if (o.f[r] === RENEW_F && o.outcome[r] === OK && o.start[r] >= from) {
      from = o.start[r];
      ttl = o.ttl[r];
    }
  }
  if (Number.isNaN(ttl)) return "";
  const end = from + ttl * 1e6;
  return end < at ? `; its lease of ${ttl} ms from ${ms(from)} had run out at ${ms(end)}` : `; its lease of ${ttl} ms from ${ms(from)} still ran until ${ms(end)}`;
}

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
