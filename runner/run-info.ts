// run.json: what a person (or a later re-check) needs to know about how a run was
// made: the options, the seed, and the versions of every server and library.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { SERVER_PROGRAMS, serverVersions } from "./server-versions.ts";
import { repoFile } from "../lib/index.ts";
import { isAdapterPath } from "../clients/adapter.ts";
import { isManifestPath, readManifest } from "../clients/program/index.ts";
import type { Test } from "../core/index.ts";
import { PACKAGES } from "../backends/index.ts";

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

/**
 * Fills in run.json's `versions` of the servers (null in what describeRun gave)
 * without blocking the start: asked one after the other, synchronously, as they
 * were, the four programs held up every run's start by about 50 ms; most runs now
 * find them in the cache (server-versions.ts).
 */
export async function askServerVersions(info: RunInfo): Promise<void> {
  Object.assign(info.versions, await serverVersions());
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

/**
 * A client adapter of the user's: its module, the package it belongs to, and the
 * versions of that package's dependencies as the module resolves them, which are
 * the libraries the run really used (not fencecheck's own copies, in `versions`).
 */
function adapterInfo(path: string): Record<string, unknown> {
  // An adapter program: what it is and how it is started; its library names itself in the workers' logs (init's "library").
  if (isManifestPath(path)) {
    const spec = readManifest(path);
    return { manifest: path, describe: spec.describe, command: spec.command, protocol: spec.protocol };
  }
  let dir = dirname(path);
  let manifest: { name?: string; version?: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> } | null = null;
  for (;;) {
    try {
      manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      break;
    } catch {
      if (dirname(dir) === dir) break;
      dir = dirname(dir);
    }
  }
  const own = createRequire(path);
  const versions: Record<string, string | null> = {};
  for (const name of Object.keys({ ...manifest?.dependencies, ...manifest?.devDependencies }).sort()) {
    if (name === "fencecheck") continue;
    versions[name] = null;
    for (const nm of own.resolve.paths(name) ?? []) {
      try {
        versions[name] = (JSON.parse(readFileSync(join(nm, name, "package.json"), "utf8")) as { version: string }).version;
        break;
      } catch {
        // not in this node_modules
      }
    }
  }
  return { module: path, package: manifest?.name ? `${manifest.name}@${manifest.version ?? "?"}` : null, versions };
}

export function describeRun(test: Test, runDir: string): RunInfo {
  const { backend, workload, clientKind, ...rest } = test;
  return {
    test: test.name,
    seed: test.seed,
    started: new Date().toISOString(),
    run_dir: runDir,
    command: process.argv.slice(2),
    options: { ...rest, backend: backend.name, workload: workload.name },
    ...(isAdapterPath(test.client) ? { adapter: adapterInfo(test.client) } : {}),
    // The servers', and fencecheck's own clients' libraries (an adapter's are under `adapter`).
    versions: {
      fencecheck: (JSON.parse(readFileSync(repoFile("package.json"), "utf8")) as { version: string }).version,
      node: process.version,
      // askServerVersions fills these in.
      ...Object.fromEntries(SERVER_PROGRAMS.map((name) => [name, null])),
      ...Object.fromEntries(PACKAGES.map((name) => [name, packageVersion(name)])),
      "toxiproxy-node-client": packageVersion("toxiproxy-node-client"),
      "prom-client": packageVersion("prom-client"),
    },
  };
}
