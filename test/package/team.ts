// A team's project outside the checkout, as a team makes one: fencecheck's
// tarball (`npm pack` of this checkout) installed with npm beside a lock library
// fencecheck does not pin (ioredis 5, where fencecheck has 6) and the team's own
// test runner (vitest), and the team's adapter and locks.json written into it.
// Shared by the tests that work there.
//
// The tarball is packed once per suite run and the project installed once (about
// 35 s of npm on two cores, most of it fencecheck's own dependencies); each test
// file then works in a copy of its own (`cp -a`: every file and link as npm left
// it, so the copy resolves everything in itself). The first file that asks makes
// them; a file that asks meanwhile waits for it (madeOnce).
import { execFile, type ExecFileOptions } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { inject } from "vitest";
import { REPO, TEMP_DIRS } from "../helpers.ts";

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment of a command run in the team's project: npm's variables of our own `npm test` left out. */
export function teamEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(npm_|INIT_CWD$|VITEST|FENCECHECK_ENTRIES$)/.test(k)) env[k] = v;
  return { ...env, ...extra };
}

export function run(command: string, args: string[], options: ExecFileOptions & { cwd: string }): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(command, args, { env: teamEnv(), maxBuffer: 64 << 20, ...options }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 255) : 0, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

export const ok = (r: Ran): string => `exit ${r.code}\n${r.stdout}\n${r.stderr}`;

/** The vitest of this checkout, for the team's own suite (examples/vitest). */
const VITEST = `vitest@${JSON.parse(readFileSync(join(REPO, "node_modules/vitest/package.json"), "utf8")).version}`;

/**
 * A directory `make` fills, made once per suite run under the suite's directory
 * (test/build-once.ts): the first caller makes it, holding a lock (a directory
 * only one mkdir can make), and a caller in another test file meanwhile waits for
 * the first one's mark of success or of failure.
 */
async function madeOnce(name: string, make: (dir: string) => Promise<void>, timeoutMs = 280_000): Promise<string> {
  const dir = join(inject("suiteDir"), name);
  const [done, failed] = [`${dir}.done`, `${dir}.failed`];
  let mine = true;
  try {
    mkdirSync(`${dir}.lock`);
  } catch {
    mine = false;
  }
  if (mine) {
    try {
      mkdirSync(dir);
      await make(dir);
    } catch (err) {
      writeFileSync(failed, String(err instanceof Error ? err.message : err));
      throw err;
    }
    writeFileSync(done, "");
    return dir;
  }
  for (const end = Date.now() + timeoutMs; !existsSync(done); await new Promise((r) => setTimeout(r, 200))) {
    if (existsSync(failed)) throw new Error(`another test file could not make ${name}: ${readFileSync(failed, "utf8")}`);
    if (Date.now() > end) throw new Error(`${name} was not made within ${timeoutMs / 1000} s by the test file making it`);
  }
  return dir;
}

/** This checkout packed as `npm pack` does (its dist/, which the suite's global set-up built from these sources): the tarball's path. */
export async function packed(): Promise<string> {
  const dir = await madeOnce("pack", async (into) => {
    const r = await run("npm", ["pack", "--ignore-scripts", "--pack-destination", into, REPO], { cwd: into });
    if (r.code !== 0) throw new Error(`npm pack failed: ${ok(r)}`);
  });
  return join(dir, readdirSync(dir).find((f) => f.endsWith(".tgz"))!);
}

/**
 * A project of the team's, in a directory of its own (removed when the test file
 * passes, test/cleanup.ts): the tarball, ioredis 5 and vitest installed into it
 * from the registry or npm's cache, and the team's adapter and matrix. Resolves
 * with the project's directory and the tarball in it.
 */
export async function teamProject(): Promise<{ dir: string; tarball: string }> {
  const tarball = await packed();
  const installed = await madeOnce("team-project", async (into) => {
    copyFileSync(tarball, join(into, basename(tarball)));
    writeFileSync(join(into, "package.json"), JSON.stringify({ name: "team-locks", version: "1.0.0", private: true }, null, 2));
    const r = await run("npm", ["install", "--no-audit", "--no-fund", join(into, basename(tarball)), "ioredis@5", VITEST], { cwd: into });
    if (r.code !== 0) throw new Error(`npm install failed: ${ok(r)}`);
  });
  const dir = mkdtempSync(join(tmpdir(), "fc-team-"));
  TEMP_DIRS.push(dir);
  const copied = await run("cp", ["-a", `${installed}/.`, dir], { cwd: dir });
  if (copied.code !== 0) throw new Error(`copying the installed project failed: ${ok(copied)}`);
  copyFileSync(join(REPO, "examples/redis-lock-adapter.ts"), join(dir, "example-lock.ts"));
  copyFileSync(join(REPO, "test/package/fixtures/my-lock.ts"), join(dir, "my-lock.ts"));
  copyFileSync(join(REPO, "test/package/fixtures/locks.json"), join(dir, "locks.json"));
  return { dir, tarball: join(dir, basename(tarball)) };
}
