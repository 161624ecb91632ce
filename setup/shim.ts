// The shim that lets libfaketime run inside Debian's redis-server, and lets the
// programs under it wait on the monotonic clock (cluster/faketime/shim.c says
// why), compiled once per version of its source into the user's cache
// (cluster/faketime.ts shimLibrary names the file).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { SHIM_SOURCE, shimLibrary } from "../cluster/faketime.ts";

/** Builds the shim unless it is there; the path, or an Error saying what gcc said. */
export function ensureShim(): { path: string; built: boolean } {
  const path = shimLibrary();
  if (existsSync(path)) return { path, built: false };
  mkdirSync(dirname(path), { recursive: true });
  // Built beside the target and renamed over it, so a server starting meanwhile never
  // preloads half a library; a name of its own per process, as runs may build at once.
  const aside = `${path}.${process.pid}.tmp`;
  const gcc = spawnSync("gcc", ["-O2", "-Wall", "-Wextra", "-shared", "-fPIC", "-o", aside, SHIM_SOURCE], { encoding: "utf8" });
  if (gcc.status !== 0) {
    rmSync(aside, { force: true });
    throw new Error(`building the faketime shim with gcc failed${gcc.error ? ` (${gcc.error.message})` : ""}:\n${gcc.stderr ?? ""}`);
  }
  renameSync(aside, path);
  return { path, built: true };
}
