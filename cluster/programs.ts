// Finding the programs a run starts: a name on PATH or a path given, and the
// Node that runs fencecheck itself (dynalite and our lock server are Node
// programs). Each backend names its own programs (backends/NAME/programs.ts),
// where Debian's packages put them and the variables by which a user names
// others (a Postgres of another version, a redis-server of their own build).
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** A Node program (its arguments start with its script). */
export const nodeBinary = (): string => process.execPath;

/** The file a program is: a path as given, or a name found on PATH; null when there is no such executable. */
export function findProgram(program: string): string | null {
  const executable = (p: string): boolean => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (program.includes("/")) return executable(program) ? program : null;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) if (dir !== "" && executable(join(dir, program))) return join(dir, program);
  return null;
}

/** What to do without a Go (or with one too old): said the same wherever fencecheck builds from a Go module. */
export const GO_ADVICE = "install Go's release from https://go.dev/dl into /usr/local/go (Debian 12's golang-go is 1.19, too old for most modules), or set FENCECHECK_GO to a go";

/** The go that builds what fencecheck builds from Go modules (Toxiproxy, an adapter's go.mod): $FENCECHECK_GO, else go on PATH, else the official tarball's place. */
export function goBinary(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.FENCECHECK_GO) return findProgram(env.FENCECHECK_GO);
  return findProgram("go") ?? findProgram("/usr/local/go/bin/go");
}

/**
 * Why `what` cannot be built from its Go module here, with what to do (GO_ADVICE,
 * then `setupCommand`); null when a Go of at least `need` is there.
 */
export function goProblemFor(what: string, need: readonly [number, number], setupCommand: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const go = goBinary(env);
  const needs = `Go ${need.join(".")} or newer`;
  const fix = `${GO_ADVICE}; then run ${setupCommand}`;
  if (go === null) return `building ${what} from its Go module needs ${needs}, and ${env.FENCECHECK_GO ? `FENCECHECK_GO=${env.FENCECHECK_GO} is not an executable` : "there is no go on PATH nor /usr/local/go/bin/go"}: ${fix}`;
  const asked = spawnSync(go, ["env", "GOVERSION"], { encoding: "utf8", env: { ...env, GOTOOLCHAIN: "local" } });
  const m = /^go(\d+)\.(\d+)/.exec(asked.stdout?.trim() ?? "");
  if (!m) return `building ${what} needs ${needs}, and ${go} did not say its version (go env GOVERSION: ${(asked.stderr || asked.error?.message || "").trim() || "nothing"}): ${fix}`;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  if (major < need[0] || (major === need[0] && minor < need[1])) return `building ${what} needs ${needs}, and ${go} is ${asked.stdout.trim()}: ${fix}`;
  return null;
}
