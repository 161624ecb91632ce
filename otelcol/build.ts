// fencecheck's OpenTelemetry Collector (module/main.go: the OTLP receiver, the
// batch processor, the OTLP/HTTP exporter and contrib's file exporter, every
// collector module at release v0.161.0) built from its Go module into the
// user's cache, as Toxiproxy is (toxiproxy/build.ts): no binary may be
// downloaded here, but the Go module proxy is reachable. The build is keyed by a
// hash of go.mod, go.sum and main.go, so that a change to any is a new build
// beside the old one, never a stale binary.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { buildAside, runSteps } from "../lib/build-aside.ts";
import { repoFile } from "../lib/paths.ts";
import { cacheDirectory, goCaches } from "../lib/user-dir.ts";
import { goBinary, goProblemFor } from "../cluster/programs.ts";

/** The collector release every module in module/go.mod is pinned to (the stable-numbered core modules at its v1.67.0). */
export const OTELCOL_VERSION = "0.161.0";
/** What module/go.mod asks for ("go 1.26.0", from the file exporter's own go.mod). */
const GO_NEEDED: readonly [number, number] = [1, 26];
/** What to run to build it, in messages. */
export const OTELCOL_SETUP = "fencecheck setup --extras otelcol";
const MODULE_FILES = ["go.mod", "go.sum", "main.go"] as const;

const moduleDir = (): string => repoFile("otelcol/module");

/** The first 12 hex digits of the hash of the module's files: a changed pin is another build. */
function moduleKey(): string {
  const hash = createHash("sha256");
  for (const f of MODULE_FILES) hash.update(f).update("\0").update(readFileSync(join(moduleDir(), f))).update("\0");
  return hash.digest("hex").slice(0, 12);
}

const buildDir = (env: NodeJS.ProcessEnv = process.env): string => join(cacheDirectory(env), `otelcol-v${OTELCOL_VERSION}-${moduleKey()}`);

/** Where the built collector is: <cache>/otelcol-v0.161.0-<key>/bin/otelcol. */
export const otelcolBinary = (env: NodeJS.ProcessEnv = process.env): string => join(buildDir(env), "bin", "otelcol");

export const otelcolBuilt = (env: NodeJS.ProcessEnv = process.env): boolean => existsSync(otelcolBinary(env));

/** Why the collector cannot be built here, with what to do; null when a Go new enough is there. Asked only while it is missing. */
export const otelcolGoProblem = (env: NodeJS.ProcessEnv = process.env): string | null => goProblemFor(`the OpenTelemetry Collector v${OTELCOL_VERSION}`, GO_NEEDED, OTELCOL_SETUP, env);

export interface CollectorBuild {
  path: string;
  /** False when it was there already (or another process built it first). */
  built: boolean;
  seconds: number;
}

/**
 * Builds the collector unless it is there, aside and renamed into place whole
 * (lib/build-aside.ts). go.mod and go.sum are read only (-mod=readonly): the
 * build takes exactly the pinned modules or fails; and no other toolchain is
 * fetched (GOTOOLCHAIN=local). GOPROXY is the environment's.
 */
export async function buildCollector(env: NodeJS.ProcessEnv = process.env): Promise<CollectorBuild> {
  const path = otelcolBinary(env);
  if (existsSync(path)) return { path, built: false, seconds: 0 };
  const problem = otelcolGoProblem(env);
  if (problem) throw new Error(problem);
  const caches = goCaches(cacheDirectory(env));
  const started = performance.now();
  const built = await buildAside(buildDir(env), async (aside) => {
    await runSteps([
      {
        command: goBinary(env)!,
        // -buildvcs=false: the module sits in fencecheck's checkout, whose git state is no part of the collector.
        args: ["build", "-trimpath", "-buildvcs=false", "-o", join(aside, "bin", "otelcol"), "."],
        cwd: moduleDir(),
        env: { ...env, ...caches, GOFLAGS: `${caches.GOFLAGS} -mod=readonly`, CGO_ENABLED: "0", GOTOOLCHAIN: "local" },
      },
    ]).catch((err: Error) => {
      throw new Error(`building the OpenTelemetry Collector v${OTELCOL_VERSION} failed: ${err.message}`);
    });
  });
  return { path, built, seconds: (performance.now() - started) / 1000 };
}
