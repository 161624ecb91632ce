// The run store: histories/<test-name>/<timestamp>/, and histories/latest pointing
// at the newest run (docs/history-format.md, "The run directory").
import { mkdirSync, symlinkSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

export function runStamp(date = new Date()): string {
  // 2026-11-22T02:13:04.123Z -> 20261122T021304.123Z
  return date.toISOString().replace(/[-:]/g, "");
}

export interface RunDir {
  dir: string;
  id: string;
}

export function createRunDir(store: string, testName: string): RunDir {
  const id = runStamp();
  const dir = resolve(store, testName, id);
  mkdirSync(join(dir, "logs"), { recursive: true });
  // Replace the link atomically: a reader never sees the store without `latest`.
  const link = join(resolve(store), "latest");
  const tmp = `${link}.${process.pid}`;
  symlinkSync(relative(resolve(store), dir), tmp);
  renameSync(tmp, link);
  return { dir, id: `${testName}/${id}` };
}

/**
 * Replaces the file whole (run.json is rewritten as the run goes): a reader
 * polling it (npm run serve, a user's script) sees the old or the new text,
 * never a cut-off one. The temporary file is in the same directory, so the
 * rename stays on one file system.
 */
export function writeJson(path: string, value: unknown): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify(value, null, 2) + "\n");
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
