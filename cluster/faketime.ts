// A process whose wall clock the clock nemesis can move (a server, or with
// --clock-target clients a worker): libfaketime preloaded behind our shim
// (cluster/faketime/shim.c, built into the user's cache by setup/shim.ts when a
// run first needs it), the offset read from a file on every time call, so moving
// a clock is writing a file. The monotonic clock is left alone: a real clock jump
// (NTP, an operator) moves wall time only, Redis expires keys by wall time, and
// the run stamps its history by the monotonic clock (store/clock.ts).
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoFile } from "../lib/paths.ts";
import { cacheDirectory } from "../lib/user-dir.ts";

export const SHIM_SOURCE = repoFile("cluster/faketime/shim.c");

/**
 * Where the shim built from this SHIM_SOURCE lives: the user's cache, named by a
 * hash of the source, so a changed source is a new file and fencecheck's own
 * folder (perhaps a read-only node_modules) is never written.
 */
export function shimLibrary(): string {
  const hash = createHash("sha256").update(readFileSync(SHIM_SOURCE)).digest("hex").slice(0, 12);
  return join(cacheDirectory(), `faketime-shim-${hash}.so`);
}

const LIBFAKETIME_DIRS = ["/usr/lib/faketime", "/usr/local/lib/faketime", "/usr/lib64/faketime"];

/** libfaketime's single-threaded library, wherever the distribution put it. */
export function findLibfaketime(): string | null {
  // A preload that does not exist is only a warning to ld.so: the server would start with a real clock.
  const override = process.env.FENCECHECK_LIBFAKETIME;
  if (override) return existsSync(override) ? override : null;
  const dirs = [...LIBFAKETIME_DIRS];
  // Debian: /usr/lib/<multiarch triplet>/faketime
  try {
    for (const d of readdirSync("/usr/lib")) dirs.push(`/usr/lib/${d}/faketime`);
  } catch {
    // no /usr/lib: nothing to find there
  }
  for (const dir of dirs) {
    const lib = `${dir}/libfaketime.so.1`;
    if (existsSync(lib)) return lib;
  }
  return null;
}

/** The two libraries to preload, in this order; throws saying how to get what is missing. */
export function faketimePreload(): string[] {
  const libfaketime = findLibfaketime();
  if (!libfaketime)
    throw new Error(
      process.env.FENCECHECK_LIBFAKETIME
        ? `FENCECHECK_LIBFAKETIME names ${process.env.FENCECHECK_LIBFAKETIME}, which does not exist`
        : "skewing clocks needs libfaketime, which is not installed: run `fencecheck setup --extras clock` (or apt-get install faketime)",
    );
  const shim = shimLibrary();
  if (!existsSync(shim)) throw new Error(`skewing clocks needs ${shim} built from ${SHIM_SOURCE}: run \`fencecheck setup --extras clock\``);
  return [shim, libfaketime];
}

/** The environment of a process whose wall clock follows `offsetFile`. */
export function faketimeEnv(offsetFile: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  // A FAKETIME of the caller's would override the file.
  delete env.FAKETIME;
  return { ...env, ...faketimeVars(offsetFile, faketimePreload()) };
}

/** The variables that put a process under libfaketime (`preload`: shim first) with its offset in a file. */
export function faketimeVars(offsetFile: string, preload: string[]): Record<string, string> {
  return {
    LD_PRELOAD: preload.join(":"),
    FAKETIME_TIMESTAMP_FILE: offsetFile,
    FAKETIME_NO_CACHE: "1",
    DONT_FAKE_MONOTONIC: "1",
  };
}

/**
 * libfaketime's relative offset, in seconds with a fraction: "+20.000", "-3.500".
 * Never a unit suffix: libfaketime scales by any "m" in the string, so "+1500ms"
 * would mean 1500 minutes.
 */
export function formatOffset(offsetMs: number): string {
  if (!Number.isFinite(offsetMs)) throw new Error(`clock offset must be a finite number of ms, got ${offsetMs}`);
  const ms = Math.round(offsetMs);
  return `${ms < 0 ? "-" : "+"}${(Math.abs(ms) / 1000).toFixed(3)}`;
}

/**
 * Move the clock: the server reads the file on each time call, so write a whole
 * new file and rename it over the old one, never truncate in place (a read
 * between truncation and write would see no offset).
 */
export function writeOffset(offsetFile: string, offsetMs: number): void {
  const tmp = `${offsetFile}.tmp`;
  writeFileSync(tmp, formatOffset(offsetMs) + "\n");
  renameSync(tmp, offsetFile);
}
