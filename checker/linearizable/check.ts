// The model check of the lock service: each key's acquires, renews and releases
// searched for an order that the lock's model could have produced (wgl.ts over
// fenced-mutex.ts for a mutex or reentrant lock, counted.ts for an rw lock or a
// semaphore), within one time budget for the whole run. A key with no such
// order yields a witness: the operation the search could not get past, the state
// it was in, and why the model refuses it there.
import type { Witness } from "../../store/events.ts";
import { ACQUIRE as ACQUIRE_F, RELEASE as RELEASE_F, RENEW as RENEW_F, type Paired } from "../paired.ts";
import { FAIL, INFO } from "../table.ts";
import { certainlyRefused, counted, countedModel, lockKindOf, type CountedModel, type LockKind } from "./counted.ts";
import { countedWitness } from "./counted-witness.ts";
import { mutexHistories, mutexModel } from "./fenced-mutex.ts";
import { mutexWitness } from "./witness.ts";
import { search } from "./wgl.ts";

/** The model each lock kind is checked against (a reentrant lock's re-entries are operations of their outermost hold: a mutex). */
export const MODEL_NAMES = { mutex: "fenced-mutex", reentrant: "fenced-mutex", rw: "fenced-rw-lock", semaphore: "fenced-semaphore" } as const;
export const MODEL_NAME = MODEL_NAMES.mutex;
export type ModelName = (typeof MODEL_NAMES)[keyof typeof MODEL_NAMES];
/** The whole run's model check stops here and says which keys it did not finish. */
export const DEFAULT_BUDGET_MS = 10_000;
const MAX_MEMO = 1 << 21;
/** Steps the first search, without the memo, may take: a few per operation. */
const QUICK_STEPS_PER_OP = 4;
const QUICK_STEPS = 10_000;

export interface ModelCheckStats {
  model: ModelName;
  /** A semaphore's permits, for its model. */
  permits?: number;
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

/**
 * The model check of `m` as a lock of `kind`: the verdict's second thread, whose
 * paired history has no lock facts, is handed the kind (shared-paired.ts); a mutex's run
 * finds none to read.
 */
export function checkModel(m: Paired, budgetMs = DEFAULT_BUDGET_MS, kind: LockKind = lockKindOf(m)): ModelCheck {
  const shared = counted(kind);
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
    const model = shared ? countedModel(h, kind) : mutexModel(h);
    const refused = shared ? certainlyRefused(h, model as CountedModel) : -1;
    if (refused >= 0) {
      keys.not_linearizable++;
      witnesses.push(countedWitness(m, h, model as CountedModel, { taken: -1, state: model.init, last: -1, blocked: refused }));
      continue;
    }
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
      witnesses.push(shared ? countedWitness(m, h, model as CountedModel, r.deepest) : mutexWitness(m, h, model as ReturnType<typeof mutexModel>, r.deepest));
    }
  }
  const result = keys.not_linearizable > 0 ? "not-linearizable" : keys.unknown > 0 ? "unknown" : "linearizable";
  return {
    witnesses,
    stats: {
      model: MODEL_NAMES[kind.lock], ...(kind.lock === "semaphore" ? { permits: kind.permits } : {}), result, keys, operations, left_out: leftOut(m), search_steps: steps,
      elapsed_ms: Math.round(performance.now() - started), budget_ms: budgetMs, unknown_keys: unknownKeys,
    },
  };
}

function leftOut(m: Paired): ModelCheckStats["left_out"] {
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
