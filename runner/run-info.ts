// run.json: what a person (or a later re-check) needs to know about how a run was
// made: the options, the seed, and the versions of every server and library.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pgBin, redisBinary } from "../cluster/programs.ts";
import { repoFile } from "../lib/index.ts";
import type { Test } from "./test.ts";

const require = createRequire(import.meta.url);

// Read from node_modules directly: some packages (redlock 5) do not export their
// package.json, so require.resolve cannot reach it.
function packageVersion(name: string): string | null {
  for (const dir of require.resolve.paths(name) ?? []) {
    try {
      return (JSON.parse(readFileSync(join(dir, name, "package.json"), "utf8")) as { version: string }).version;
    } catch {
      // not in this node_modules
    }
  }
  return null;
}

function binaryVersion(cmd: string, args: string[]): string | null {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", timeout: 5000, stdio: ["ignore", "pipe", "ignore"] }).split("\n")[0].trim();
  } catch {
    return null;
  }
}

/** A Debian package's version (ZooKeeper's jar says nothing of its own without starting it). */
function debianVersion(pkg: string): string | null {
  const v = binaryVersion("dpkg-query", ["-W", "-f=${Version}", pkg]);
  return v || null;
}

export interface RunInfo {
  test: string;
  seed: number;
  started: string;
  command: string[];
  options: Record<string, unknown>;
  versions: Record<string, string | null>;
  [more: string]: unknown;
}

export function describeRun(test: Test, runDir: string): RunInfo {
  const { backend, workload, ...rest } = test;
  return {
    test: test.name,
    seed: test.seed,
    started: new Date().toISOString(),
    run_dir: runDir,
    command: process.argv.slice(2),
    options: { ...rest, backend: backend.name, workload: workload.name },
    versions: {
      fencecheck: (JSON.parse(readFileSync(repoFile("package.json"), "utf8")) as { version: string }).version,
      node: process.version,
      "redis-server": binaryVersion(redisBinary(), ["--version"]),
      etcd: binaryVersion("etcd", ["--version"]),
      zookeeper: debianVersion("zookeeper"),
      postgres: binaryVersion(pgBin("postgres"), ["--version"]),
      ioredis: packageVersion("ioredis"),
      etcd3: packageVersion("etcd3"),
      pg: packageVersion("pg"),
      redlock: packageVersion("redlock"),
      redlock4: packageVersion("redlock4"),
      "@sesamecare-oss/redlock": packageVersion("@sesamecare-oss/redlock"),
      "redis-semaphore": packageVersion("redis-semaphore"),
      "simple-redis-mutex": packageVersion("simple-redis-mutex"),
      redis: packageVersion("redis"),
      "node-zookeeper-client": packageVersion("node-zookeeper-client"),
      "toxiproxy-node-client": packageVersion("toxiproxy-node-client"),
      "prom-client": packageVersion("prom-client"),
    },
  };
}
