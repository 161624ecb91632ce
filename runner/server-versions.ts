// The versions of the servers' programs that run.json records. Asking a program
// means running it (redis-server --version; dpkg-query for ZooKeeper, whose jar
// says nothing without starting), four processes a run: each spawn holds up the
// runner's event loop for several ms, and their CPU is wanted by the processes
// the run is starting at that moment. So an answer is kept in the cache
// directory with the program file's path, size and modification time, and asked
// again only when those change (an upgrade, another program named by
// FENCECHECK_REDIS_SERVER, ...).
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { cacheDirectory } from "../lib/user-dir.ts";
import { writeJson } from "../store/run-dir.ts";
import { VERSION_PROBES } from "../backends/index.ts";

/** The programs, in the order run.json lists them: every backend's, in the registry's order. */
export const SERVER_PROGRAMS: readonly string[] = Object.keys(VERSION_PROBES);

type Kept = Record<string, { stamp: string; version: string }>;

function stampOf(file: string | null): string | null {
  if (file === null) return null;
  try {
    const s = statSync(file);
    return `${file}:${s.size}:${s.mtimeMs}`;
  } catch {
    return null;
  }
}

/** Each program's version (null: not installed, or it did not say), from the cache where its file is unchanged. */
export async function serverVersions(cache = join(cacheDirectory(), "server-versions.json")): Promise<Record<string, string | null>> {
  let kept: Kept = {};
  try {
    kept = JSON.parse(readFileSync(cache, "utf8")) as Kept;
  } catch {
    // None yet, or unreadable: every program is asked, and the file written anew.
  }
  let changed = false;
  const versions = await Promise.all(
    SERVER_PROGRAMS.map(async (name) => {
      const stamp = stampOf(VERSION_PROBES[name].file());
      if (stamp === null) return null;
      if (kept[name]?.stamp === stamp) return kept[name].version;
      const version = await VERSION_PROBES[name].ask();
      // A program that did not answer is asked again next time, not remembered as silent.
      if (version !== null) {
        kept[name] = { stamp, version };
        changed = true;
      }
      return version;
    }),
  );
  if (changed) keep(cache, kept);
  return Object.fromEntries(SERVER_PROGRAMS.map((name, i) => [name, versions[i]]));
}

/** Written aside and renamed over (writeJson), so that runs at the same moment each read a whole file; a cache that cannot be written is only asked again. */
function keep(cache: string, kept: Kept): void {
  try {
    mkdirSync(dirname(cache), { recursive: true });
    writeJson(cache, kept);
  } catch {
    // Asked again next time.
  }
}
