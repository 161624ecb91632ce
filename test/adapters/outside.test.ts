// A user's own Python adapter program in a project of theirs, outside this
// checkout: the adapter of docs/adapter-protocol.md (taken from the page, so the
// page's program is the one that runs), a requirements.txt of their own with the
// redis-py pins and hashes, and a manifest naming it as its "environment". The
// run builds (or finds) the venv, runs the program in it with fencecheck's
// fencecheck_adapter.py importable, and gives a verdict; nothing is written into
// the project but the run's store, nor into fencecheck's adapters/python. A
// manifest whose environment is missing, or a requirements file without hashes,
// is refused before anything starts (254).
import { describe, it, expect } from "vitest";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { latestRun, readNdjson, REPO, runCli, TEMP_DIRS } from "../helpers.ts";

/** The Python program under the page's marker. */
function pagesAdapter(): string {
  const page = readFileSync(join(REPO, "docs/adapter-protocol.md"), "utf8");
  const at = page.indexOf("<!-- own-python-adapter");
  expect(at, "docs/adapter-protocol.md has no own-python-adapter marker").toBeGreaterThan(-1);
  const block = page.slice(at).match(/```python\n([\s\S]*?)```/);
  return block![1];
}

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "fc-own-python-"));
  TEMP_DIRS.push(dir);
  expect(realpathSync(dir).startsWith(realpathSync(REPO))).toBe(false);
  return dir;
}

const manifest = (dir: string, environment: string): string => {
  const path = join(dir, "x.adapter.json");
  writeFileSync(path, JSON.stringify({ protocol: 1, describe: "our lock over redis-py", command: ["python3", "my_lock.py"], environment, backends: ["redis"], fences: false, renew: "explicit" }, null, 2));
  return path;
};

describe("a user's Python adapter outside the checkout", () => {
  it("with its own hashed requirements.txt: the venv is built or found, the program runs in it, and the run gives a verdict", async () => {
    const dir = project();
    writeFileSync(join(dir, "my_lock.py"), pagesAdapter());
    writeFileSync(join(dir, "requirements.txt"), readFileSync(join(REPO, "adapters/python/requirements/redis-py.txt"), "utf8").replace(/^#.*\n/gm, ""));
    const m = manifest(dir, "requirements.txt");
    const store = join(dir, "runs");
    const cli = runCli("test", ["--client", m, "--backend", "redis", "--fence", "off", "--time-limit", "5", "--concurrency", "4", "--workers", "2", "--seed", "3", "--store", store], {}, dir);
    const code = await cli.exit;
    expect([0, 1], cli.stdout() + cli.stderr()).toContain(code);
    expect(cli.stdout()).toMatch(/^(VALID|INVALID) {1,2}fenced-write on redis, fencing off/m);
    const run = realpathSync(latestRun(store));
    const grants = readNdjson(join(run, "history.ndjson")).filter((e) => e.f === "acquire" && e.type === "ok");
    expect(grants.length).toBeGreaterThan(3);
    // The venv's redis-py, not the machine's: the program said which in init_ok, which the worker logs.
    const logs = readdirSync(join(run, "logs")).map((f) => readFileSync(join(run, "logs", f), "utf8")).join("\n");
    expect(logs).toContain("redis-py 8.1.0");
    // The project holds what the user wrote and the store; fencecheck's loop left no bytecode in the package.
    expect(readdirSync(dir).sort()).toEqual(["my_lock.py", "requirements.txt", "runs", "x.adapter.json"]);
    expect(existsSync(join(REPO, "adapters/python/__pycache__"))).toBe(false);
  }, 180_000);

  it("refused before anything starts (254): an environment file that is not there, and a requirements file without hashes", async () => {
    const dir = project();
    writeFileSync(join(dir, "my_lock.py"), pagesAdapter());
    const store = join(dir, "runs");
    const missing = runCli("test", ["--client", manifest(dir, "requirements.txt"), "--backend", "redis", "--fence", "off", "--time-limit", "3", "--store", store], {}, dir);
    expect(await missing.exit, missing.stderr()).toBe(254);
    expect(missing.stderr()).toContain(`x.adapter.json: "environment" "requirements.txt" does not exist (${join(dir, "requirements.txt")})`);

    writeFileSync(join(dir, "requirements.txt"), "redis==8.1.0\n");
    const loose = runCli("test", ["--client", manifest(dir, "requirements.txt"), "--backend", "redis", "--fence", "off", "--time-limit", "3", "--store", store], {}, dir);
    expect(await loose.exit, loose.stderr()).toBe(254);
    expect(loose.stderr()).toContain(
      `x.adapter.json: its "environment" ${join(dir, "requirements.txt")} must pin every package with its hashes (pip install --require-hashes), but redis==8.1.0 has no --hash; make one with \`pip-compile --generate-hashes\``,
    );
    expect(existsSync(store)).toBe(false);
  }, 60_000);
});
