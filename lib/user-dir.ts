// The user's directories: where the paths they give resolve (their working
// directory), and where fencecheck keeps what it builds for itself (a cache of
// theirs, never the package's own folder, which may be a read-only
// node_modules shared by every project on the machine).
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { ROOT } from "./paths.ts";

const same = (a: string, b: string): boolean => {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return resolve(a) === resolve(b);
  }
};

/**
 * The directory the user's relative paths mean. A command's working directory,
 * as for every CLI (npm sets it to a team's package root when one of the team's
 * own scripts runs `fencecheck`); but npm starts fencecheck's own scripts
 * (`npm run check -- ...` in its checkout) in fencecheck's root, and the
 * directory the user typed the command in is then INIT_CWD.
 */
export function userDirectory(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const typedIn = env.INIT_CWD;
  if (typedIn && env.npm_lifecycle_event && same(cwd, ROOT)) return typedIn;
  return cwd;
}

/**
 * Where fencecheck keeps what it builds for itself (the faketime shim):
 * $FENCECHECK_CACHE, else $XDG_CACHE_HOME/fencecheck, else ~/.cache/fencecheck.
 */
export function cacheDirectory(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FENCECHECK_CACHE) return resolve(env.FENCECHECK_CACHE);
  const base = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.startsWith("/") ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  return join(base, "fencecheck");
}

/**
 * Go's module, build and path caches under fencecheck's cache, shared by every Go
 * build of ours; module files writable (-modcacherw) so that deleting the cache
 * removes everything a build made.
 */
export function goCaches(cache: string): Record<string, string> {
  return { GOPATH: join(cache, "go", "path"), GOMODCACHE: join(cache, "go", "mod"), GOCACHE: join(cache, "go", "build"), GOFLAGS: "-modcacherw" };
}
