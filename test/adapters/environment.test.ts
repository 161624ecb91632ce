// Adapter programs' environments (clients/program/environment.ts): what a lock
// file's name says, the key a lock file hashes to, the variables a program runs
// with; then real builds: a hashed requirements file into a venv, a pom into
// Maven's jars and a go.mod into a program, each built for real in a cache of
// the test's own (which borrows fencecheck's Maven and Go module caches, so that
// nothing is downloaded twice) and then looked up; two builds of one key at once;
// and a build that fails leaving nothing behind.
import { describe, it, expect } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildEnvironment, ecosystemOf, environmentDirectory, environmentKey, environmentVariables, unhashedRequirement, PYTHON_ADAPTER_MODULE_DIR } from "../../clients/program/environment.ts";
import { readManifest } from "../../clients/program/index.ts";
import { cacheDirectory } from "../../lib/user-dir.ts";
import { REPO, runCli, tempDir } from "../helpers.ts";

const project = (): string => tempDir("fc-env-");

/** An empty cache but for fencecheck's own Maven repository and Go caches: each environment in it is built, not found. */
function freshCache(): string {
  const cache = project();
  for (const shared of ["m2", "go"]) {
    const real = join(cacheDirectory(), shared);
    mkdirSync(real, { recursive: true });
    symlinkSync(real, join(cache, shared));
  }
  return cache;
}

/** six 1.17.0, a package of one module and no dependencies, pinned as pip-compile pins it (from adapters/python/requirements/python-etcd3.txt). */
function sixPins(): string {
  const all = readFileSync(join(REPO, "adapters/python/requirements/python-etcd3.txt"), "utf8");
  const pin = all.match(/^six==1\.17\.0 \\\n(?: +--hash=sha256:[0-9a-f]+(?: \\)?\n)+/m);
  return pin![0];
}

describe("environment: pure parts", () => {
  it("the ecosystem is the lock file's name", () => {
    expect(ecosystemOf("/p/requirements.txt")).toBe("python");
    expect(ecosystemOf("/p/requirements/redis-py.txt")).toBe("python");
    expect(ecosystemOf("/p/pom.xml")).toBe("maven");
    expect(ecosystemOf("/p/go.mod")).toBe("go");
    expect(ecosystemOf("/p/Pipfile.lock")).toBeNull();
    expect(ecosystemOf("/p/build.gradle")).toBeNull();
  });

  it("the key is 16 hex of the lock files' content: the same content, the same key wherever and under whatever name it lies; a Go module's go.sum and sources count, and a pom's Java sources (not its tests)", () => {
    const a = project();
    const b = project();
    writeFileSync(join(a, "requirements.txt"), "x==1 --hash=sha256:00\n");
    writeFileSync(join(b, "locked.txt"), "x==1 --hash=sha256:00\n");
    const key = environmentKey("python", join(a, "requirements.txt"));
    expect(key).toMatch(/^[0-9a-f]{16}$/);
    expect(environmentKey("python", join(b, "locked.txt"))).toBe(key);
    writeFileSync(join(b, "requirements.txt"), "x==2 --hash=sha256:00\n");
    expect(environmentKey("python", join(b, "requirements.txt"))).not.toBe(key);
    expect(environmentDirectory("python", join(a, "requirements.txt"), "/c")).toBe(`/c/adapter-envs/python-${key}`);

    writeFileSync(join(a, "go.mod"), "module example.com/x\n\ngo 1.22\n");
    writeFileSync(join(a, "main.go"), "package main\nfunc main() {}\n");
    const go = environmentKey("go", join(a, "go.mod"));
    writeFileSync(join(a, "go.sum"), "");
    const withSum = environmentKey("go", join(a, "go.mod"));
    expect(withSum).not.toBe(go);
    mkdirSync(join(a, "lock"));
    writeFileSync(join(a, "lock", "lock.go"), "package lock\n");
    expect(environmentKey("go", join(a, "go.mod"))).not.toBe(withSum);

    const pom = join(a, "pom.xml");
    writeFileSync(pom, "<project/>\n");
    const bare = environmentKey("maven", pom);
    writeFileSync(join(a, "MyLock.java"), "class MyLock {}\n");
    const withSource = environmentKey("maven", pom);
    expect(withSource).not.toBe(bare);
    mkdirSync(join(a, "src", "main", "java", "lock"), { recursive: true });
    writeFileSync(join(a, "src", "main", "java", "lock", "Lock.java"), "package lock; class Lock {}\n");
    const withTree = environmentKey("maven", pom);
    expect(withTree).not.toBe(withSource);
    mkdirSync(join(a, "src", "test", "java"), { recursive: true });
    writeFileSync(join(a, "src", "test", "java", "LockTest.java"), "class LockTest {}\n");
    expect(environmentKey("maven", pom)).toBe(withTree);
  });

  it("the variables: a venv first on PATH with fencecheck_adapter.py importable; Maven's jars; a Go build's bin; FENCECHECK_ENV for each", () => {
    const base = { PATH: "/usr/bin:/bin", PYTHONPATH: "/mine" };
    expect(environmentVariables("python", "/c/e", base)).toEqual({
      FENCECHECK_ENV: "/c/e",
      PATH: "/c/e/bin:/usr/bin:/bin",
      VIRTUAL_ENV: "/c/e",
      PYTHONPATH: `${PYTHON_ADAPTER_MODULE_DIR}:/mine`,
      PYTHONDONTWRITEBYTECODE: "1",
    });
    expect(existsSync(join(PYTHON_ADAPTER_MODULE_DIR, "fencecheck_adapter.py"))).toBe(true);
    expect(environmentVariables("maven", "/c/m", base, ["/c/m/lib/a.jar", "/c/m/lib/b.jar"])).toEqual({ FENCECHECK_ENV: "/c/m", FENCECHECK_CLASSPATH: "/c/m/lib/a.jar:/c/m/lib/b.jar" });
    expect(environmentVariables("go", "/c/g", {})).toEqual({ FENCECHECK_ENV: "/c/g", PATH: "/c/g/bin" });
  });

  it("a requirements file pins every package with a hash, or says which does not", () => {
    expect(unhashedRequirement(sixPins())).toBeNull();
    expect(unhashedRequirement("# a comment\n--index-url https://pypi.org/simple\nsix==1.17.0 \\\n    --hash=sha256:abc\n")).toBeNull();
    expect(unhashedRequirement("six==1.17.0\n")).toBe("six==1.17.0 has no --hash");
    expect(unhashedRequirement(`${sixPins()}redis>=5  # unpinned\n`)).toBe("redis>=5 has no --hash");
    expect(unhashedRequirement("# nothing\n")).toBe("it lists no requirement");
  });

  it("a manifest's environment is resolved from its directory; a missing one or one of no known kind is refused naming the field", () => {
    const dir = project();
    const m = (environment: string): string => {
      const path = join(dir, `m-${Math.random().toString(36).slice(2)}.adapter.json`);
      writeFileSync(path, JSON.stringify({ protocol: 1, describe: "x", command: ["python3", "x.py"], backends: ["redis"], fences: false, renew: "none", environment }));
      return path;
    };
    writeFileSync(join(dir, "requirements.txt"), sixPins());
    expect(readManifest(m("requirements.txt")).environment).toBe(join(dir, "requirements.txt"));
    expect(() => readManifest(m("nope.txt"))).toThrow(/"environment" "nope.txt" does not exist/);
    expect(() => readManifest(m("Pipfile.lock"))).toThrow(/"environment" must name a requirements file \(any \.txt\), a pom\.xml or a go\.mod/);
    expect(() => readManifest(m("/abs/requirements.txt"))).toThrow(/relative to the manifest's directory/);
  });
});

describe("environment: real builds", () => {
  it("a hashed requirements file: a venv whose python3 imports the package; the second time a lookup", async () => {
    const dir = project();
    writeFileSync(join(dir, "requirements.txt"), sixPins());
    const file = join(dir, "requirements.txt");
    const cache = freshCache();
    const first = await buildEnvironment("test.adapter.json", file, undefined, cache);
    expect(first.ok, first.ok ? "" : first.message).toBe(true);
    if (!first.ok) return;
    expect(first.built).toBe(true);
    const out = execFileSync(join(first.dir, "bin", "python3"), ["-c", "import six, sys; print(six.__version__, sys.prefix)"], { encoding: "utf8" });
    expect(out.trim()).toBe(`1.17.0 ${first.dir}`);
    // Renamed into place: its scripts name where it is, not where it was built.
    expect(readFileSync(join(first.dir, "bin", "pip"), "utf8").split("\n")[0]).toBe(`#!${first.dir}/bin/python3`);
    const again = await buildEnvironment("test.adapter.json", file, undefined, cache);
    expect(again).toMatchObject({ ok: true, dir: first.dir, built: false });
  }, 120_000);

  it("a pom: Maven's jars of its dependencies, transitive ones too; the Java source beside it compiled against them with fencecheck.Json, first on the classpath", async () => {
    const dir = project();
    const pom = join(dir, "pom.xml");
    writeFileSync(
      pom,
      `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion><groupId>t</groupId><artifactId>t</artifactId><version>1</version><packaging>pom</packaging>
<dependencies><dependency><groupId>org.slf4j</groupId><artifactId>slf4j-simple</artifactId><version>1.7.36</version></dependency></dependencies></project>\n`,
    );
    // It compiles only against the jars (slf4j's LoggerFactory is no JDK class) and with fencecheck's own Java (fencecheck.Json).
    writeFileSync(join(dir, "Hello.java"), "public class Hello { public static void main(String[] a) { System.out.println(org.slf4j.LoggerFactory.class.getName() + \" \" + fencecheck.Json.write(java.util.List.of(1))); } }\n");
    const built = await buildEnvironment("test.adapter.json", pom, undefined, freshCache());
    expect(built.ok, built.ok ? "" : built.message).toBe(true);
    if (!built.ok) return;
    expect(built.built).toBe(true);
    expect(readdirSync(join(built.dir, "lib")).sort()).toEqual(["slf4j-api-1.7.36.jar", "slf4j-simple-1.7.36.jar"]);
    const vars = environmentVariables("maven", built.dir, process.env);
    expect(vars.FENCECHECK_CLASSPATH.split(":")[0]).toBe(join(built.dir, "classes"));
    expect(execFileSync("java", ["-cp", vars.FENCECHECK_CLASSPATH, "Hello"], { encoding: "utf8" }).trim()).toBe("org.slf4j.LoggerFactory [1]");
  }, 180_000);

  it("a go.mod: its main package built into bin, on PATH", async () => {
    const dir = project();
    writeFileSync(join(dir, "go.mod"), "module example.com/fc-env-test\n\ngo 1.22\n");
    writeFileSync(join(dir, "main.go"), 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("fc-env-test") }\n');
    const built = await buildEnvironment("test.adapter.json", join(dir, "go.mod"), undefined, freshCache());
    expect(built.ok, built.ok ? "" : built.message).toBe(true);
    if (!built.ok) return;
    expect(built.built).toBe(true);
    expect(execFileSync("fc-env-test", { encoding: "utf8", env: { ...process.env, ...environmentVariables("go", built.dir, process.env) } }).trim()).toBe("fc-env-test");
  }, 300_000);

  it("in a cache of its own: two builds of one key at once make one environment; a failing build leaves nothing and names the file, the command and its output", async () => {
    const cache = project();
    const dir = project();
    writeFileSync(join(dir, "requirements.txt"), sixPins());
    const file = join(dir, "requirements.txt");
    const [a, b] = await Promise.all([buildEnvironment("a.adapter.json", file, undefined, cache), buildEnvironment("b.adapter.json", file, undefined, cache)]);
    expect(a.ok && b.ok && a.dir === b.dir).toBe(true);
    expect(readdirSync(join(cache, "adapter-envs"))).toEqual([`python-${environmentKey("python", file)}`]);

    // A hash that is no package's: pip refuses it.
    writeFileSync(join(dir, "bad.txt"), sixPins().replace(/sha256:[0-9a-f]{8}/g, "sha256:00000000"));
    const bad = await buildEnvironment("bad.adapter.json", join(dir, "bad.txt"), undefined, cache);
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.message).toContain(`bad.adapter.json: its "environment" ${join(dir, "bad.txt")}: building it failed: \``);
    expect(bad.message).toMatch(/pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r \S+bad\.txt` exited with code 1:\n[\s\S]*(HASHES|hash)/);
    expect(readdirSync(join(cache, "adapter-envs"))).toEqual([`python-${environmentKey("python", file)}`]);

    writeFileSync(join(dir, "loose.txt"), "six==1.17.0\n");
    const loose = await buildEnvironment("loose.adapter.json", join(dir, "loose.txt"), undefined, cache);
    expect(loose).toEqual({ ok: false, message: expect.stringMatching(/must pin every package with its hashes \(pip install --require-hashes\), but six==1\.17\.0 has no --hash; make one with `pip-compile --generate-hashes`/) });
  }, 180_000);
});

describe("environment: a toolchain only the user can install", () => {
  it("fencecheck setup --adapters redis-py with no python3 on PATH: 254, the part, the file and the command that installs it, and nothing built", async () => {
    const dir = tempDir("fc-no-python-");
    const bin = join(dir, "bin");
    mkdirSync(bin);
    // Only node on PATH: the machine has no python3 at all.
    symlinkSync(process.execPath, join(bin, "node"));
    const cache = join(dir, "cache");
    const r = runCli("setup", ["--adapters", "redis-py"], { PATH: bin, FENCECHECK_CACHE: cache });
    expect(await r.exit, r.stderr()).toBe(254);
    expect(r.stderr()).toMatch(/redis-py .*its environment adapters\/python\/requirements\/redis-py\.txt cannot be built here: python3 is not on PATH \(apt-get install -y python3 python3-venv\)/);
    expect(existsSync(join(cache, "adapter-envs"))).toBe(false);
  });
});
