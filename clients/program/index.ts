// Lock adapters in any language: a program named by a manifest that speaks the
// adapter protocol (docs/adapter-protocol.md), made into a LockAdapter like a
// TypeScript module's, so the worker, the preflight and the checker need not know
// the difference.
import { relative } from "node:path";
import type { LockAdapter } from "../lock.ts";
import type { Requirement } from "../../setup/requirements.ts";
import { ROOT } from "../../lib/paths.ts";
import { buildEnvironment, builtEnvironment, ecosystemOf, missingTools } from "./environment.ts";
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

/**
 * The environment a manifest names, as a part of the machine a run needs: there
 * when built (a hash lookup), built by set-up's `finish` when not. The manifest
 * is read when first asked, not when a backend's registry is loaded.
 */
export function environmentRequirement(id: string, serves: string, manifest: string): Requirement {
  const file = (): string | undefined => readManifest(manifest).environment;
  const shown = (f: string): string => (f.startsWith(`${ROOT}/`) ? relative(ROOT, f) : f);
  return {
    id,
    serves,
    packages: [],
    get builds() {
      const f = file();
      return f ? shown(f) : undefined;
    },
    present() {
      const f = file();
      return f === undefined || builtEnvironment(ecosystemOf(f)!, f) !== null;
    },
    // Asked only while it is not built: a toolchain only the user can install
    // (python3-venv, Maven, Go) is said before anything is built, and is theirs to fix (254).
    get getIt() {
      const f = file();
      if (f === undefined || this.present()) return undefined;
      const lacking = missingTools(ecosystemOf(f)!, f);
      return lacking ? `its environment ${shown(f)} cannot be built here: ${lacking}` : undefined;
    },
    async finish(say) {
      const f = file();
      if (f === undefined) return;
      const built = await buildEnvironment(manifest, f, say);
      if (!built.ok) throw new Error(built.message);
    },
  };
}
