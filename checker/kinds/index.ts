// The analyses of format 2's lock kinds (docs/anomalies.md): what each kind
// promises, checked over the holds' spans and the resource's rule, and the
// liveness finding stuck-lock. A format 1 history, or a mutex's, runs none but
// grant-after-cancel and stuck-lock, which any format 2 history may show.
export { rwViolations, readsOnly } from "./rw.ts";
export { semaphoreOverflows } from "./semaphore.ts";
export { reentrancyViolations, type Reentrancy } from "./reentrancy.ts";
export { grantsAfterCancel } from "./cancel.ts";
export { stuckLocks } from "./stuck.ts";
export { staleUnderRule, falseRejectionsUnderRule } from "./resource-rules.ts";
