// What a run asks of the machine: only the parts it uses (the default Redis test
// needs Redis and nothing else), and, where a part is missing and cannot be
// installed here (no root, no passwordless sudo), a refusal (254) that names the
// packages and the command, with nothing started or stored.
import { describe, it, expect } from "vitest";
import { accessSync, chmodSync, constants, existsSync, symlinkSync } from "node:fs";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { parseArgs, noPositional } from "../../lib/index.ts";
import { TEST_OPTIONS, buildTest } from "../../runner/index.ts";
import { satisfied } from "../../setup/index.ts";
import { requirementsOf } from "../../runner/needs.ts";
import { CLIENT_NEEDS, OPTION_NEEDS, SERVER_NEEDS } from "../../backends/index.ts";
import { cliArgs, cliEnv, REPO, tempDir } from "../helpers.ts";

function needs(...argv: string[]): string[] {
  const { options, positional } = parseArgs(argv, TEST_OPTIONS);
  noPositional(positional);
  return requirementsOf(buildTest(options)).map((r) => r.id);
}

describe("requirementsOf", () => {
  it("asks for the parts a test uses and no others", () => {
    expect(needs()).toEqual(["redis"]);
    expect(needs("--backend", "redlock")).toEqual(["redis"]);
    expect(needs("--backend", "etcd")).toEqual(["etcd"]);
    expect(needs("--backend", "zookeeper")).toEqual(["zookeeper"]);
    expect(needs("--backend", "postgres", "--pg-pooler", "pgbouncer")).toEqual(["postgres", "pgbouncer"]);
    expect(needs("--nemesis", "clock")).toEqual(["redis", "clock"]);
    expect(needs("--resource", "postgres")).toEqual(["redis", "postgres"]);
    // The servers run elsewhere: nothing of theirs is needed here.
    expect(needs("--deploy", "docker", "--backend", "etcd")).toEqual(["docker"]);
    expect(needs("--deploy", "external", "--endpoints", "127.0.0.1:6379")).toEqual([]);
    // A reference adapter program: its language and library too, wherever the servers run.
    expect(needs("--backend", "zookeeper", "--client", "curator")).toEqual(["zookeeper", "curator"]);
    // The members and the client are built from one pom: one part.
    expect(needs("--backend", "hazelcast")).toEqual(["hazelcast"]);
    // One environment for ShedLock's three clients, on either backend.
    expect(needs("--backend", "postgres", "--client", "shedlock-jdbc-dbtime", "--fence", "off")).toEqual(["postgres", "shedlock"]);
    expect(needs("--client", "shedlock-redis", "--fence-source", "single")).toEqual(["redis", "shedlock"]);
    expect(needs("--client", "redis-py-timeout-0", "--fence", "off")).toEqual(["redis", "redis-py"]);
    expect(needs("--client", "redis-py", "--fence-source", "single", "--deploy", "external", "--endpoints", "127.0.0.1:6379")).toEqual(["redis-py"]);
  });

  it("each part names the Debian packages that provide it, how to get it (npm's), or the lock file its environment is built from; a program the user named counts as there", () => {
    for (const r of [...Object.values(SERVER_NEEDS), ...OPTION_NEEDS, ...CLIENT_NEEDS]) expect(r.packages.length > 0 || (r.getIt ?? "").length > 0 || (r.builds ?? "").length > 0, r.id).toBe(true);
    // The reference adapters' libraries come from PyPI and Maven Central at pinned versions, not from Debian.
    expect(Object.fromEntries(CLIENT_NEEDS.map((r) => [r.id, [r.builds, r.packages]]))).toEqual({
      "redis-py": ["adapters/python/requirements/redis-py.txt", []],
      "python-redis-lock": ["adapters/python/requirements/python-redis-lock.txt", []],
      "bsm-redislock": ["adapters/go/go.mod", []],
      pottery: ["adapters/python/requirements/pottery.txt", []],
      redsync: ["adapters/go/go.mod", []],
      "python-etcd3": ["adapters/python/requirements/python-etcd3.txt", []],
      "etcd-mutex-go": ["adapters/go/go.mod", []],
      kazoo: ["adapters/python/requirements/kazoo.txt", []],
      curator: ["adapters/java/pom.xml", []],
      redisson: ["adapters/java/redisson/pom.xml", []],
      // A backend's own adapter, whose environment is its servers' too (Hazelcast's members and client, one pom).
      hazelcast: ["backends/hazelcast/java/pom.xml", []],
      shedlock: ["adapters/java/shedlock/pom.xml", []],
    });
    expect(SERVER_NEEDS.dynamodb.getIt).toMatch(/npm install/);
    expect(satisfied(SERVER_NEEDS.etcd, { FENCECHECK_ETCD: "/opt/etcd/bin/etcd" })).toBe(true);
  });
});

/** Whether the user nobody can run the built command from this checkout (not where it lies under a private home). */
function nobodyCanRun(): boolean {
  try {
    accessSync(join(REPO, "dist", "cli", "fencecheck.js"), constants.R_OK);
  } catch {
    return false;
  }
  return REPO.split("/").every((_, i, parts) => {
    const dir = parts.slice(0, i + 1).join("/") || "/";
    try {
      accessSync(dir, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function asNobody(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...cliArgs(args[0]), ...args.slice(1)], { cwd: "/tmp", uid: 65534, gid: 65534, env: cliEnv({ ...env, HOME: "/nonexistent" }) }, (err, _out, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, stderr }),
    );
  });
}

describe.skipIf(process.getuid?.() !== 0 || !nobodyCanRun())("a part missing where nobody may install it", { timeout: 60_000 }, () => {
  // etcd made to look missing: a PATH with apt-get, dpkg-query and sudo (where there is one) and no etcd.
  const bin = tempDir("fc-path-");
  chmodSync(bin, 0o755);
  for (const p of ["apt-get", "dpkg-query", "sudo"]) if (existsSync(`/usr/bin/${p}`)) symlinkSync(`/usr/bin/${p}`, join(bin, p));
  const missing = { PATH: bin };

  it("fencecheck test refuses (254) naming the packages and the command, and stores nothing", async () => {
    const store = join("/tmp", `fc-nobody-${process.pid}-${Date.now()}`);
    const r = await asNobody(["test", "--backend", "etcd", "--store", store], missing);
    expect(r.code, r.stderr).toBe(254);
    expect(r.stderr).toMatch(/fencecheck needs the Debian packages etcd-server \(etcd: --backend etcd\); install them as root: sudo apt-get install -y etcd-server/);
    expect(existsSync(store)).toBe(false);
  });

  it("fencecheck setup says the same and exits 1", async () => {
    const r = await asNobody(["setup", "--backends", "etcd"], missing);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/sudo apt-get install -y etcd-server/);
  });
});
