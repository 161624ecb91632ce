// What a lock client is, whatever lock service it talks to: the interface every
// client implements (acquire, renew, release), the user's own adapters (a module,
// or a program of any language behind a manifest), the shipped adapter programs,
// and the resource client. The shipped clients themselves live with their
// backends (backends/NAME/), which declare them by name; the registry
// (backends/index.ts) finds a --client there.
export type { Hold, LockClient, Outcome, ClientOptions, ClientContext, ServiceAccess, Endpoint, AcquireRequest, LockKind, LockKinds, MakeClient, FenceCounter, LockAdapter } from "./lock.ts";
export { LOCK_KINDS, CANCELLED, CANCEL_UNKNOWN, FENCE_SOURCES, UnknownOutcome, pollAcquire, type FenceSource } from "./lock.ts";
export { ResourceClient, type WriteOutcome } from "./resource.ts";
export { isAdapterPath, adapterPath, loadAdapter, checkAdapterClient, adapterClients, shippedProgram } from "./adapter.ts";
export { isManifestPath } from "./program/index.ts";
export { clockDrift, atLeast } from "./majority.ts";
