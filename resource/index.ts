// The protected resource: the thing a lock guards. Clients write to it with their
// fencing token; it refuses stale tokens (when fencing is on) and writes every
// decision to resource.ndjson (docs/history-format.md). It runs as a process of its own
// (main.ts); this folder offers the way to start and stop it. Talk to it with
// clients/resource.ts.
export { startResource, type ResourceHandle, type ResourceOptions } from "./spawn.ts";
/** Larger request bodies are refused (400) unread. */
export { MAX_BODY_BYTES } from "./request.ts";
/** Whether resource.ndjson and the table of the store the resource decided in agree (after a kill of that store). */
export { logTableDisagreements, type StoreRow } from "./agreement.ts";
/** What a store's decider module gives the resource, and the pieces a database decider is made of. */
export { committedDecider, OutcomeUnknown, type DecisionStore, type StoreVerdict, type StoreDeciderModule } from "./committed.ts";
export type { Decider } from "./decider.ts";
