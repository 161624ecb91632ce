// Where the project's own files are, whether this code runs from the TypeScript
// sources (tsx, vitest) or from the JavaScript that `npm ci` builds into dist/
// (scripts/build.mjs, one bundle per entry). A bundle inlines this module into
// dist/<entry>.js, so paths relative to import.meta.url would point into dist/:
// everything here is relative to the repository's root instead, found by walking
// up to its package.json.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** True when this code was loaded from the built JavaScript, not from the sources. */
export const BUILT = import.meta.url.endsWith(".js");

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json"))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`fencecheck: no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

/** The repository's root (where package.json is). */
export const ROOT = findRoot();

/** A file of the repository that is not code (a preset, a shim's source), by its path from the root. */
export function repoFile(relative: string): string {
  return join(ROOT, relative);
}

/**
 * Set to "dist" (the test suite does, vitest.config.ts), a process that runs from
 * the sources starts its children from the built bundles, which test/build-once.ts
 * built from the same sources: a run's workers, resource and proxy then start as
 * users' do, without compiling TypeScript in each.
 */
export const ENTRIES_ENV = "FENCECHECK_ENTRIES";

/**
 * The file to start for one of our entry points ("runner/worker", "cli/check"): the
 * built bundle when this process runs built code, the source otherwise, so a child
 * runs the same code as its parent (unless ENTRIES_ENV says dist).
 */
export function entryFile(entry: string): string {
  return BUILT || process.env[ENTRIES_ENV] === "dist" ? join(ROOT, "dist", `${entry}.js`) : join(ROOT, `${entry}.ts`);
}

/**
 * Whether this process was started with tsx's loader: a built command that loads a
 * user's TypeScript adapter runs so (lib/typescript.ts), and its workers must too.
 */
export const TSX_LOADED = process.execArgv.some((a) => /[\\/]tsx[\\/]|^tsx$/.test(a));

/** The node arguments that must precede `file` to run it: tsx's loader for a source, or when this process has it; nothing for a bundle. */
export function nodeArgsFor(file: string): string[] {
  return file.endsWith(".ts") || TSX_LOADED ? ["--import", tsxUrl()] : [];
}

/** `node` arguments to start an entry point: its loader (if any) and its file. */
export function entryArgs(entry: string): string[] {
  const file = entryFile(entry);
  return [...nodeArgsFor(file), file];
}

/**
 * The URL of tsx for `node --import` in a child: resolved here rather than left to
 * `--import tsx`, which would look for tsx from the caller's cwd; resolved per
 * spawn, so that importing lib never fails where tsx is missing; and through
 * createRequire, since import.meta.resolve is missing under vitest.
 */
export function tsxUrl(): string {
  return pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
}
