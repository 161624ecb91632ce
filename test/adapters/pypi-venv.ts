// A venv made from an adapter program's hashed requirements file, for the tests
// of the adapters whose libraries come from PyPI (their manifests'
// `environment`), until fencecheck builds that environment itself: then this
// goes. Built once per requirements file's content under the temporary
// directory and reused; its bin goes first on the PATH of the runs that use it.
import { expect } from "vitest";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, tempRunDir, runCli, latestRun, readNdjson } from "../helpers.ts";

/** The venv's bin directory, built (with pip's --require-hashes --no-deps, as the environment will be) if not yet there. */
export function pypiVenv(requirements: string): string {
  const file = join(REPO, requirements);
  const digest = createHash("sha256").update(readFileSync(file)).digest("hex").slice(0, 16);
  const dir = join(tmpdir(), `fencecheck-test-venv-${digest}`);
  if (!existsSync(join(dir, "built"))) {
    // Built aside and renamed into place: test files running at once may each
    // build it, and the first rename wins. A venv's python3 finds its packages
    // from where it stands, so the move keeps it whole (only pip's shebang, not
    // used again, names the old place).
    const building = `${dir}.${process.pid}`;
    rmSync(building, { recursive: true, force: true });
    execFileSync("python3", ["-m", "venv", building], { stdio: "pipe" });
    execFileSync(join(building, "bin", "pip"), ["install", "--quiet", "--disable-pip-version-check", "--require-hashes", "--no-deps", "-r", file], { stdio: "pipe", timeout: 120_000 });
    writeFileSync(join(building, "built"), requirements + "\n");
    try {
      renameSync(building, dir);
    } catch {
      rmSync(building, { recursive: true, force: true });
    }
  }
  return join(dir, "bin");
}

/** The environment of a run whose `python3` is that venv's. */
export const withVenv = (bin: string): NodeJS.ProcessEnv => ({ PATH: `${bin}:${process.env.PATH ?? ""}`, VIRTUAL_ENV: join(bin, "..") });

/** `fencecheck test` with that venv's python3 first on PATH: its exit, output, history, results and first worker's log (where the library names itself). */
export async function venvRun(env: NodeJS.ProcessEnv, args: string[], prefix: string) {
  const store = tempRunDir(prefix);
  const cli = runCli("test", [...args, "--store", store], env);
  const exit = await cli.exit;
  const dir = realpathSync(latestRun(store));
  const [header, ...events] = readNdjson(join(dir, "history.ndjson"));
  return {
    exit,
    out: cli.stdout() + cli.stderr(),
    header,
    events,
    results: JSON.parse(readFileSync(join(dir, "results.json"), "utf8")),
    log: readFileSync(join(dir, "logs", "worker-1.log"), "utf8"),
  };
}

/**
 * A fenced run whose fences come from a Redis counter INCRed after the library's
 * grant: a pause landing between the two lets a later holder's INCR come first,
 * a fence-regression of the lock (docs/measurements.md) that the resource still
 * survives. The lock may show that; the resource must show nothing, and the exit
 * code must follow the verdict.
 */
export function expectResourceSafe(r: { exit: number | null; out: string; results: { anomaly_types: string[] } }): void {
  expect(r.results.anomaly_types.every((t) => t === "fence-regression"), r.out).toBe(true);
  expect(r.exit, r.out).toBe(r.results.anomaly_types.length ? 1 : 0);
}
