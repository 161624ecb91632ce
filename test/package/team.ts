// A team's project outside the checkout, as a team makes one: fencecheck's
// tarball (`npm pack` of this checkout) installed with npm beside a lock library
// fencecheck does not pin (ioredis 5, where fencecheck has 6), and the team's
// adapter and locks.json written into it. Shared by the tests that work there.
import { execFile, type ExecFileOptions } from "node:child_process";
import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "../helpers.ts";

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

/**
 * Packs this checkout as `npm pack` does (its dist/, which the suite's global
 * set-up built from these sources) and makes a project that installs the tarball
 * and ioredis 5 (and `more`) from the registry or npm's cache. Resolves with the project's directory.
 */
export async function teamProject(more: string[] = []): Promise<{ dir: string; tarball: string }> {
  const dir = mkdtempSync(join(tmpdir(), "fc-team-"));
  const packed = await run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir, REPO], { cwd: dir });
  if (packed.code !== 0) throw new Error(`npm pack failed: ${ok(packed)}`);
  const tarball = join(dir, packed.stdout.trim().split("\n").pop()!);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "team-locks", version: "1.0.0", private: true }, null, 2));
  const installed = await run("npm", ["install", "--no-audit", "--no-fund", tarball, "ioredis@5", ...more], { cwd: dir });
  if (installed.code !== 0) throw new Error(`npm install failed: ${ok(installed)}`);
  copyFileSync(join(REPO, "examples/redis-lock-adapter.ts"), join(dir, "example-lock.ts"));
  copyFileSync(join(REPO, "test/package/fixtures/my-lock.ts"), join(dir, "my-lock.ts"));
  copyFileSync(join(REPO, "test/package/fixtures/locks.json"), join(dir, "locks.json"));
  return { dir, tarball };
}
