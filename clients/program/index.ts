// Lock adapters in any language: a program named by a manifest that speaks the
// adapter protocol (docs/adapter-protocol.md), made into a LockAdapter like a
// TypeScript module's, so the worker, the preflight and the checker need not know
// the difference.
import type { LockAdapter } from "../lock.ts";
import { readManifest, type ProgramSpec } from "./manifest.ts";
import { ProgramClient } from "./program-client.ts";

export { isManifestPath, readManifest, type ProgramSpec } from "./manifest.ts";
export { INIT_TIMEOUT_MS } from "./program-client.ts";
export { PROTOCOL_VERSION } from "./messages.ts";

/** The adapter a manifest describes: one program per logical client. */
export function programAdapter(spec: ProgramSpec): LockAdapter {
  return { describe: spec.describe, backends: spec.backends, fences: spec.fences, kinds: spec.kinds, create: (ctx) => new ProgramClient(spec, ctx) };
}

/** The manifest at `path`, read and checked, as an adapter. */
export const loadProgramAdapter = (path: string): LockAdapter => programAdapter(readManifest(path));
