// The model check of the lock service: each key's acquires, renews and releases
// searched for an order that a fenced mutex could have produced (wgl.ts over
// fenced-mutex.ts), within one time budget for the whole run. A key with no such
// order yields a witness: the operation the search could not get past, the state
// it was in, and why the mutex refuses it there.
import type { Witness } from "../../store/events.ts";
import { ms, quoteAcquire, quoteOp } from "../explain.ts";
import { ACQUIRE as ACQUIRE_F, eventsOf, RELEASE as RELEASE_F, RENEW as RENEW_F, type Model } from "../model.ts";
import { FAIL, INFO } from "../table.ts";
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

function witness(m: Model, h: MutexHistory, model: ReturnType<typeof mutexModel>, deepest: Deepest): Witness {
  const holder = model.holder(deepest.state);
  const fenced = model.fenced(deepest.state);
  const b = deepest.blocked;
  const row = (i: number): number => h.row[i];
  const holdText = (j: number): string => quoteAcquire(m, h.holds[j]);
  const releasesOf = (j: number): number[] => {
    const out: number[] = [];
    for (let i = 0; i < h.length; i++) if (h.hold[i] === j && (h.kind[i] === RELEASE_OK || h.kind[i] === NOT_RELEASED)) out.push(i);
    return out;
  };
  const doneAt = (i: number): string => (h.ret[i] >= 0 ? `before it completed at ${ms(m.ops.doneTime[row(i)])}` : "at any time");
  const related: number[] = [row(b)];
  let why: string;
  const j = h.hold[b];
  if (h.kind[b] === ACQUIRE && holder >= 0) {
    const rel = releasesOf(holder);
    related.push(m.holds.acquire[h.holds[holder]], ...rel.map(row));
    const ends = rel.length === 0 ? "which no release of its own ever ended"
      : `whose release ${rel.map((r) => `#${m.ops.invoke[row(r)]}`).join(", ")} was invoked only at ${ms(m.ops.start[row(rel[0])])}${rel.some((r) => h.ret[r] < 0) ? " (outcome unknown)" : ""}`;
    why = `the lock was held by the hold of ${holdText(holder)}, ${ends}`;
  } else if (h.kind[b] === ACQUIRE) {
    related.push(m.holds.acquire[h.holds[fenced]]);
    why = `its fence ${h.fences[j]} is not above fence ${h.fences[fenced]}, granted before it by ${holdText(fenced)}`;
  } else if (h.kind[b] === NOT_RELEASED) {
    why = `it answered that the lock was no longer its hold's, yet no other hold can have taken it from ${holdText(j)}`;
    related.push(m.holds.acquire[h.holds[j]]);
  } else {
    related.push(m.holds.acquire[h.holds[j]]);
    if (holder >= 0) related.push(m.holds.acquire[h.holds[holder]]);
    why = `its hold (${holdText(j)}) no longer held the lock: ${holder >= 0 ? `the hold of ${holdText(holder)} did` : "the lock was free"}`;
  }
  const last = deepest.last >= 0 ? `; the last to take effect was ${quoteOp(m, row(deepest.last))}` : "";
  if (deepest.last >= 0) related.push(row(deepest.last));
  return {
    key: h.key,
    events: eventsOf(m, ...related),
    explanation:
      `On key ${JSON.stringify(h.key)} no order of the acquires, renews and releases consistent with real time is one a mutex allows. ` +
      `The search got furthest with ${deepest.taken} of ${h.length} operations taken effect${last}; ` +
      `there ${quoteOp(m, row(b))} had to take effect ${doneAt(b)}, but ${why}. ` +
      `A lock with leases does this by design when a lease runs out (see mutex-violation and lease_overlaps for what the leases allow).`,
  };
}
