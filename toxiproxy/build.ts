// Shopify's Toxiproxy built from its Go module, at one pinned version, into the
// user's cache (lib/user-dir.ts): it has no Debian package and no binary may be
// downloaded here, but the Go module proxy is reachable. Go's own caches (the
// module and build caches) live under fencecheck's cache too, writable
// (-modcacherw), so deleting that directory removes everything the build made.
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { cacheDirectory, goCaches } from "../lib/user-dir.ts";
import { goBinary } from "../cluster/programs.ts";

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
export function goProblem(env: NodeJS.ProcessEnv = process.env): string | null {
  const go = goBinary(env);
  const need = `Go ${GO_NEEDED.join(".")} or newer`;
  const fix = `install ${need} (Debian 12's golang-go is 1.19, too old; the official build goes to /usr/local/go) and put its bin/ on PATH, or set FENCECHECK_GO to its go; then run ${SETUP_COMMAND}`;
  if (go === null) return `building Toxiproxy v${TOXIPROXY_VERSION} from its Go module needs ${need}, and ${env.FENCECHECK_GO ? `FENCECHECK_GO=${env.FENCECHECK_GO} is not an executable` : "there is no go on PATH nor /usr/local/go/bin/go"}: ${fix}`;
  const asked = spawnSync(go, ["env", "GOVERSION"], { encoding: "utf8", env: { ...env, GOTOOLCHAIN: "local" } });
  const m = /^go(\d+)\.(\d+)/.exec(asked.stdout?.trim() ?? "");
  if (!m) return `building Toxiproxy v${TOXIPROXY_VERSION} needs ${need}, and ${go} did not say its version (go env GOVERSION: ${(asked.stderr || asked.error?.message || "").trim() || "nothing"}): ${fix}`;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  if (major < GO_NEEDED[0] || (major === GO_NEEDED[0] && minor < GO_NEEDED[1]))
    return `building Toxiproxy v${TOXIPROXY_VERSION} needs ${need}, and ${go} is ${asked.stdout.trim()}: ${fix}`;
  return null;
}

/** Whether a process of that pid is alive (a build directory of a dead one is litter). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};

/**
 * Builds the server unless it is there. Into a directory of this process's own,
 * renamed into place whole: two processes building at once both succeed (the
 * second rename finds the first's and keeps it), and one stopped half-way
 * (Ctrl-C) leaves only its own directory, which the next build removes.
 */
export async function buildToxiproxy(env: NodeJS.ProcessEnv = process.env): Promise<{ path: string; built: boolean; seconds: number }> {
  const path = toxiproxyBinary(env);
  if (existsSync(path)) return { path, built: false, seconds: 0 };
  const problem = goProblem(env);
  if (problem) throw new Error(problem);
  const cache = cacheDirectory(env);
  const final = versionDir(env);
  mkdirSync(cache, { recursive: true });
  const stem = `toxiproxy-v${TOXIPROXY_VERSION}.building-`;
  for (const name of readdirSync(cache))
    if (name.startsWith(stem) && !alive(Number(name.slice(stem.length)))) rmSync(join(cache, name), { recursive: true, force: true });
  const aside = join(cache, `${stem}${process.pid}`);
  rmSync(aside, { recursive: true, force: true });
  const started = performance.now();
  // Asynchronous, so that set-up builds the adapters' environments at the same time (setup/index.ts).
  const go = await new Promise<{ failed: string | null; stderr: string }>((resolve) =>
    execFile(
      goBinary(env)!,
      ["install", `-ldflags=-X ${MODULE}.Version=${TOXIPROXY_VERSION}`, `${MODULE}/cmd/server@v${TOXIPROXY_VERSION}`],
      {
        encoding: "utf8",
        maxBuffer: 16 << 20,
        env: {
          ...env,
          ...goCaches(cache),
          GOBIN: join(aside, "bin"),
          // A static binary, so that no C compiler is needed; and no other toolchain fetched.
          CGO_ENABLED: "0",
          GOTOOLCHAIN: "local",
        },
      },
      (err, _stdout, stderr) => resolve({ failed: err ? (typeof err.code === "number" ? `exit ${err.code}` : err.message) : null, stderr: String(stderr) }),
    ),
  );
  if (go.failed !== null) {
    rmSync(aside, { recursive: true, force: true });
    throw new Error(`building Toxiproxy v${TOXIPROXY_VERSION} with go install failed (${go.failed}):\n${go.stderr.trim()}`);
  }
  renameSync(join(aside, "bin", "server"), join(aside, "bin", "toxiproxy-server"));
  try {
    renameSync(aside, final);
  } catch (err) {
    // Another process put its build there first: the same module at the same version.
    rmSync(aside, { recursive: true, force: true });
    if (!existsSync(path)) throw err;
    return { path, built: false, seconds: (performance.now() - started) / 1000 };
  }
  return { path, built: true, seconds: (performance.now() - started) / 1000 };
}
