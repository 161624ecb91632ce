// The run directories a trial left in its store, read as a user would: where
// they are, whether clients had begun operating (an event after the history's
// header), and what `fencecheck check` makes of each afterwards.
import { spawn } from "node:child_process";
import { closeSync, existsSync, lstatSync, openSync, readdirSync, readlinkSync, readSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { entryArgs } from "../lib/index.ts";

/** Directories under `store` holding a run (run.json or history.ndjson), links not followed. */
export function runDirs(store: string, depth = 8): string[] {
  if (depth < 0 || !existsSync(store)) return [];
  const here = ["run.json", "history.ndjson"].some((f) => existsSync(join(store, f))) ? [store] : [];
  const below = readdirSync(store, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== "data" && e.name !== "logs")
    .flatMap((e) => runDirs(join(store, e.name), depth - 1));
  return [...here, ...below];
}

/** The first bytes of a file ("" when there is none). */
function head(path: string, bytes = 4096): string {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return "";
  }
  try {
    const buf = Buffer.alloc(bytes);
    return buf.toString("utf8", 0, readSync(fd, buf, 0, bytes, 0));
  } finally {
    closeSync(fd);
  }
}

/** Whether the history holds an event after its header: the clients have begun. */
export function operating(runDir: string): boolean {
  const text = head(join(runDir, "history.ndjson"));
  const nl = text.indexOf("\n");
  return nl >= 0 && text.length > nl + 1;
}

/** Whether the run wrote nothing a check could read (no history, or an empty one). */
export const wroteNothing = (runDir: string): boolean => head(join(runDir, "history.ndjson"), 1) === "";

/** The verdict words of `fencecheck check`'s exit codes; anything else is not a verdict. */
const VERDICTS: Record<number, string> = { 0: "valid", 1: "invalid", 2: "unknown" };

export interface Checked {
  /** valid, invalid or unknown; null when the check gave no verdict. */
  verdict: string | null;
  code: number | null;
  /** The check's last line on stderr when it gave no verdict. */
  why: string;
}

/** `fencecheck check <runDir>`, as a user runs it on a run that was killed. */
export function checkRun(runDir: string): Promise<Checked> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [...entryArgs("cli/fencecheck"), "check", runDir], { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr!.on("data", (d: Buffer) => (err += d));
    child.on("error", (e) => done({ verdict: null, code: null, why: e.message }));
    child.on("exit", (code) => {
      const verdict = code !== null ? (VERDICTS[code] ?? null) : null;
      done({ verdict, code, why: verdict ? "" : (err.trim().split("\n").at(-1) ?? "") });
    });
  });
}

/**
 * Directories a run's servers kept outside the run directory (data/<name> is a
 * link there when the postgres user cannot reach the store: backends/postgres/server.ts)
 * that are still there. The teardown, or the reaper, removes them.
 */
export function outsideDataDirs(runDir: string): string[] {
  const data = join(runDir, "data");
  if (!existsSync(data)) return [];
  const found: string[] = [];
  for (const name of readdirSync(data)) {
    const link = join(data, name);
    if (!lstatSync(link).isSymbolicLink()) continue;
    const target = readlinkSync(link);
    const dir = isAbsolute(target) ? target : resolve(data, target);
    // The link names <temporary directory of the run's own>/<name>; that whole directory is what was made.
    if (existsSync(dir)) found.push(dirname(realpathSync(dir)));
  }
  return found;
}
