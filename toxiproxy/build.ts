// Shopify's Toxiproxy built from its Go module, at one pinned version, into the
// user's cache (lib/user-dir.ts): it has no Debian package and no binary may be
// downloaded here, but the Go module proxy is reachable. Go's own caches (the
// module and build caches) live under fencecheck's cache too, writable
// (-modcacherw), so deleting that directory removes everything the build made.
import { existsSync, renameSync } from "node:fs";
import { join } from "node:path";
import { buildAside, runSteps, type BuildStep } from "../lib/build-aside.ts";
import { cacheDirectory, goCaches } from "../lib/user-dir.ts";
import { goBinary, goProblemFor } from "../cluster/programs.ts";

export const TOXIPROXY_VERSION = "2.12.0";
const MODULE = "github.com/Shopify/toxiproxy/v2";
/** What Toxiproxy's go.mod asks for at that version ("go 1.23.0"). */
const GO_NEEDED: readonly [number, number] = [1, 23];
/** What to run to build it, in messages. */
export const SETUP_COMMAND = "fencecheck setup --extras toxiproxy";

const versionDir = (env: NodeJS.ProcessEnv = process.env): string => join(cacheDirectory(env), `toxiproxy-v${TOXIPROXY_VERSION}`);

/** Where the built server is: <cache>/toxiproxy-v2.12.0/bin/toxiproxy-server. */
export const toxiproxyBinary = (env: NodeJS.ProcessEnv = process.env): string => join(versionDir(env), "bin", "toxiproxy-server");

export const toxiproxyBuilt = (env: NodeJS.ProcessEnv = process.env): boolean => existsSync(toxiproxyBinary(env));

/**
 * Why Toxiproxy cannot be built here, with what to do; null when a Go new enough
 * is there. Asked only while the binary is missing: a built one needs no Go.
 */
export const goProblem = (env: NodeJS.ProcessEnv = process.env): string | null => goProblemFor(`Toxiproxy v${TOXIPROXY_VERSION}`, GO_NEEDED, SETUP_COMMAND, env);

/**
 * Builds the server unless it is there, aside and renamed into place whole
 * (lib/build-aside.ts): two processes building at once both succeed, and one
 * stopped half-way (Ctrl-C) leaves only its own directory, which the next build
 * removes. Asynchronous, so that set-up builds the adapters' environments at the
 * same time (setup/index.ts).
 */
export async function buildToxiproxy(env: NodeJS.ProcessEnv = process.env): Promise<{ path: string; built: boolean; seconds: number }> {
  const path = toxiproxyBinary(env);
  if (existsSync(path)) return { path, built: false, seconds: 0 };
  const problem = goProblem(env);
  if (problem) throw new Error(problem);
  const cache = cacheDirectory(env);
  const started = performance.now();
  const built = await buildAside(versionDir(env), async (aside) => {
    const install: BuildStep = {
      command: goBinary(env)!,
      args: ["install", `-ldflags=-X ${MODULE}.Version=${TOXIPROXY_VERSION}`, `${MODULE}/cmd/server@v${TOXIPROXY_VERSION}`],
      cwd: cache,
      env: {
        ...env,
        ...goCaches(cache),
        GOBIN: join(aside, "bin"),
        // A static binary, so that no C compiler is needed; and no other toolchain fetched.
        CGO_ENABLED: "0",
        GOTOOLCHAIN: "local",
      },
    };
    await runSteps([install]).catch((err: Error) => {
      throw new Error(`building Toxiproxy v${TOXIPROXY_VERSION} failed: ${err.message}`);
    });
    renameSync(join(aside, "bin", "server"), join(aside, "bin", "toxiproxy-server"));
  });
  return { path, built, seconds: (performance.now() - started) / 1000 };
}
