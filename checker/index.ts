// What a history proves. `checkRun` reads a run directory in one streaming pass and
// returns its verdict (results.json's content); `writeResults` stores it. `analyze`
// is the same check on a history already in memory (`loadRun` reads one whole).
// `model: "strict"` makes the model check's findings (strict-mutex-violation, or an rw
// lock's or semaphore's strict-rw-violation, strict-semaphore-violation) count.
export { checkRun, checkRunKeeping, loadRun, optionsOf, writeResults, type CheckedRun, type LoadedRun } from "./run.ts";
// The model's columns, for a reader of what the check kept (CheckedRun).
export { ACQUIRE, WRITE, type Paired } from "./paired.ts";
export { OK, FAIL, INFO } from "./table.ts";
export { analyze, LIVENESS, MAX_WITNESSES, MODELS, STRICT_MUTEX_VIOLATION, STRICT_RW_VIOLATION, STRICT_SEMAPHORE_VIOLATION, STRICT_VIOLATIONS, type CheckOptions } from "./analyze.ts";
export type { RunInput } from "./paired.ts";
// Fairness (stats.fairness): overtakes and waits per key; the report marks each waiter with it.
export { fairnessOf, placedAt, waitersOfHistory, type FairnessStats, type Waiter } from "./fairness.ts";
// Nemesis events paired into the windows of time each fault lasted (the report draws them).
export { faultKind, faultWindows, type FaultWindow } from "./fault-windows.ts";
// Which faults hit which holds: each witness's `faults`, and what a fault on a worker, a link or a server reaches (the report's lanes).
export { faultReach, knownWorkers, type FaultInEffect } from "./faults-in-effect.ts";
export type { ClockBounds } from "./clock.ts";
