// An adapter program's environment: the libraries it runs with, built from a
// lock file of the kind its ecosystem's own tools read (a hashed requirements
// file, a pom.xml, a go.mod with its go.sum), at the versions a team pins. The
// manifest names the file ("environment"); fencecheck builds it once into its
// cache, keyed by a hash of the lock file(s), so the second run is a lookup and a
// changed pin is a new environment beside the old. Never into the checkout, the
// user's project or node_modules, which may be read-only or shared.
//
// Built whole or not at all, aside and renamed into place (lib/build-aside.ts):
// two processes building the same key race harmlessly, and a Ctrl-C leaves only
// a directory no lookup takes, which a later build sweeps once its builder is gone.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { findProgram, GO_ADVICE, goBinary } from "../../cluster/programs.ts";
import { cacheDirectory, goCaches } from "../../lib/user-dir.ts";
import { ROOT } from "../../lib/paths.ts";
import { buildAside, runSteps, type BuildStep } from "../../lib/build-aside.ts";

export type Ecosystem = "python" | "maven" | "go";

/** What an environment file's name says it is; null for a name fencecheck cannot build. */
export function ecosystemOf(file: string): Ecosystem | null {
  const name = basename(file);
  if (name.endsWith(".txt")) return "python";
  if (name === "pom.xml") return "maven";
  if (name === "go.mod") return "go";
  return null;
}

export const ENVIRONMENT_FILES = "a requirements file (any .txt), a pom.xml or a go.mod";

/** A Go module's .go sources, under its directory, leaving out what `go build` leaves out (testdata, hidden and vendored-by-name folders). */
function goSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name.startsWith(".") || e.name.startsWith("_")) return [];
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "testdata" || existsSync(join(path, "go.mod")) ? [] : goSources(path);
    return e.name.endsWith(".go") ? [path] : [];
  });
}

/** A Java adapter's sources: the .java files beside the pom and under its src/main/java (not src/test, whose dependencies are not the runtime's). */
function javaSources(dir: string): string[] {
  const under = (d: string): string[] =>
    existsSync(d)
      ? readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.name.startsWith(".") ? [] : e.isDirectory() ? under(join(d, e.name)) : e.name.endsWith(".java") ? [join(d, e.name)] : []))
      : [];
  const beside = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith(".java")).map((e) => join(dir, e.name));
  return [...beside, ...under(join(dir, "src", "main", "java"))].sort();
}

/**
 * fencecheck's own Java for adapters (package fencecheck: Json), compiled into
 * every pom environment that has sources of its own, as fencecheck_adapter.py is
 * put on a Python program's path: from the package, so it is the fencecheck that
 * runs the adapter's.
 */
export const JAVA_ADAPTER_SOURCES_DIR = join(ROOT, "adapters", "java", "fencecheck");
const javaSupport = (): string[] =>
  readdirSync(JAVA_ADAPTER_SOURCES_DIR)
    .filter((n) => n.endsWith(".java"))
    .sort()
    .map((n) => join(JAVA_ADAPTER_SOURCES_DIR, n));

/** What a build compiles of its own: a Go module's sources, a pom's Java sources; none for a requirements file. */
function sourcesOf(ecosystem: Ecosystem, file: string): string[] {
  if (ecosystem === "go") return goSources(dirname(file)).sort();
  return ecosystem === "maven" ? javaSources(dirname(file)) : [];
}

/** The files whose content decides what gets built: the requirements file; the pom and its Java sources; go.mod, go.sum and the module's sources. */
function lockFiles(ecosystem: Ecosystem, file: string): string[] {
  if (ecosystem !== "go") return [file, ...sourcesOf(ecosystem, file)];
  const sum = join(dirname(file), "go.sum");
  return [file, ...(existsSync(sum) ? [sum] : []), ...sourcesOf(ecosystem, file)];
}

/**
 * The first 16 hex digits of a sha256 over the lock files: the environment's
 * key. One file is its content alone, so the same pins under another name share
 * an environment; with sources (and always for a Go module) each file goes with
 * its path beside the lock file.
 */
export function environmentKey(ecosystem: Ecosystem, file: string): string {
  const h = createHash("sha256");
  const files = lockFiles(ecosystem, file);
  if (ecosystem !== "go" && files.length === 1) return h.update(readFileSync(file)).digest("hex").slice(0, 16);
  const base = dirname(file);
  for (const f of files) h.update(`${relative(base, f)}\0`).update(readFileSync(f)).update("\0");
  // fencecheck's own Java is compiled in too: by its name, wherever the package lies.
  if (ecosystem === "maven") for (const f of javaSupport()) h.update(`fencecheck/${basename(f)}\0`).update(readFileSync(f)).update("\0");
  return h.digest("hex").slice(0, 16);
}

/** Where the environments live, in fencecheck's cache. */
const environmentsDirectory = (cache = cacheDirectory()): string => join(cache, "adapter-envs");

/** Where the environment of this file is built: <cache>/adapter-envs/<ecosystem>-<key>. */
export const environmentDirectory = (ecosystem: Ecosystem, file: string, cache = cacheDirectory()): string =>
  join(environmentsDirectory(cache), `${ecosystem}-${environmentKey(ecosystem, file)}`);

/** Where fencecheck's own Python module for adapters is (fencecheck_adapter.py), shipped in the package. */
export const PYTHON_ADAPTER_MODULE_DIR = join(ROOT, "adapters", "python");

/** A Maven environment's classpath: its compiled sources' classes (when it had sources), then its jars in a stable order. */
const classpathOf = (dir: string): string[] => {
  const lib = join(dir, "lib");
  const jars = existsSync(lib) ? readdirSync(lib).filter((n) => n.endsWith(".jar")).sort().map((n) => join(lib, n)) : [];
  return [...(existsSync(join(dir, "classes")) ? [join(dir, "classes")] : []), ...jars];
};

/**
 * What the program is run with, given its environment's directory: a Python
 * venv first on PATH (so "python3" is the venv's) with fencecheck's
 * fencecheck_adapter.py importable (from the package, so a user's adapter speaks
 * the protocol of the fencecheck that runs it); a Maven build's classes and jars as FENCECHECK_CLASSPATH;
 * a Go build's programs first on PATH; FENCECHECK_ENV for all.
 */
export function environmentVariables(ecosystem: Ecosystem, dir: string, base: NodeJS.ProcessEnv, classpath?: readonly string[]): Record<string, string> {
  const first = (v: string, rest: string | undefined): string => (rest ? `${v}:${rest}` : v);
  const vars: Record<string, string> = { FENCECHECK_ENV: dir };
  if (ecosystem === "python") {
    vars.PATH = first(join(dir, "bin"), base.PATH);
    vars.VIRTUAL_ENV = dir;
    vars.PYTHONPATH = first(PYTHON_ADAPTER_MODULE_DIR, base.PYTHONPATH);
    // Importing fencecheck_adapter.py from the package must not write __pycache__ into it (a checkout, a shared node_modules).
    vars.PYTHONDONTWRITEBYTECODE = "1";
  } else if (ecosystem === "go") vars.PATH = first(join(dir, "bin"), base.PATH);
  else vars.FENCECHECK_CLASSPATH = (classpath ?? classpathOf(dir)).join(":");
  return vars;
}

/** The environment's directory when it is built; null when not (yet). */
export function builtEnvironment(ecosystem: Ecosystem, file: string, cache = cacheDirectory()): string | null {
  const dir = environmentDirectory(ecosystem, file, cache);
  return existsSync(dir) ? dir : null;
}

const known = new Map<string, Record<string, string>>();

/**
 * The variables a manifest's program runs with (none when it names no
 * environment), looked up once per process. Throws when the environment is not
 * built: a run builds it before anything starts (runner/needs.ts), so only a
 * program started some other way gets here without one.
 */
export function programEnvironment(manifest: string, file: string | undefined, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  if (file === undefined) return {};
  const had = known.get(file);
  if (had) return had;
  const ecosystem = ecosystemOf(file)!;
  const dir = builtEnvironment(ecosystem, file);
  if (dir === null) throw new Error(`${manifest}: its "environment" ${file} is not built: a run builds it before it starts, or \`fencecheck setup\` for the reference adapters`);
  const vars = environmentVariables(ecosystem, dir, base);
  known.set(file, vars);
  return vars;
}

/** What a build says: the environment's directory, or why there is none (a missing tool, a file pip would refuse, a command that failed). */
export type Built = { ok: true; dir: string; built: boolean; seconds: number } | { ok: false; message: string };

/** A requirements line with no --hash, which pip's hash-checking mode would refuse with less to say; null when every requirement has its hashes. */
export function unhashedRequirement(text: string): string | null {
  const lines = text.replace(/\\\r?\n/g, " ").split(/\r?\n/);
  const requirements = lines.map((l) => l.replace(/(^|\s)#.*$/, "").trim()).filter((l) => l !== "" && !l.startsWith("-"));
  if (requirements.length === 0) return "it lists no requirement";
  const bare = requirements.find((l) => !/--hash=sha(256|384|512):[0-9a-f]+/.test(l));
  return bare === undefined ? null : `${bare.split(/\s/)[0]} has no --hash`;
}

/**
 * What the ecosystem's tools lack on this machine, and the command that installs
 * it; null when all are there. Synchronous (one short python3 at most), so that
 * set-up can ask it as a part's getIt before it builds anything.
 */
export function missingTools(ecosystem: Ecosystem, file: string): string | null {
  if (ecosystem === "python") {
    if (!findProgram("python3")) return "python3 is not on PATH (apt-get install -y python3 python3-venv)";
    const venv = spawnSync("python3", ["-c", "import venv, ensurepip"], { cwd: ROOT, stdio: "ignore" });
    return venv.status === 0 ? null : "python3 has no venv module with ensurepip (apt-get install -y python3-venv)";
  }
  if (ecosystem === "maven") {
    // javac only when there are sources to compile against the jars.
    const lacking = ["mvn", "java", ...(sourcesOf(ecosystem, file).length ? ["javac"] : [])].filter((p) => !findProgram(p));
    const named = lacking.length > 1 ? `${lacking.slice(0, -1).join(", ")} and ${lacking[lacking.length - 1]} are` : `${lacking[0]} is`;
    return lacking.length ? `${named} not on PATH (apt-get install -y maven default-jdk-headless)` : null;
  }
  return goBinary() ? null : `go is not on PATH nor /usr/local/go/bin/go, and FENCECHECK_GO names none: ${GO_ADVICE}`;
}

/** The steps that build the environment into `tmp`, which will be renamed to `final`. */
function steps(ecosystem: Ecosystem, file: string, tmp: string, final: string, cache: string): BuildStep[] {
  const cwd = dirname(file);
  if (ecosystem === "python")
    return [
      // Its prompt the final name, not the aside one it is made in.
      { command: "python3", args: ["-m", "venv", "--prompt", basename(final), tmp], cwd },
      // --no-deps: what is installed is exactly what the file pins, each checked against its hashes.
      { command: join(tmp, "bin", "python3"), args: ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--require-hashes", "--no-deps", "-r", file], cwd },
    ];
  if (ecosystem === "maven") {
    const copy = (offline: boolean): BuildStep => ({
      command: "mvn",
      args: [
        "-q",
        "-B",
        "-Dstyle.color=never",
        ...(offline ? ["-o"] : []),
        "-f",
        file,
        // The plugin by its full name and version: the build never asks Central what "dependency:" means today.
        "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies",
        "-DincludeScope=runtime",
        `-DoutputDirectory=${join(tmp, "lib")}`,
        `-Dmaven.repo.local=${join(cache, "m2")}`,
      ],
      cwd,
    });
    // Offline when the local repository may already hold everything: no question to Central at each new pom.
    const jars: BuildStep = existsSync(join(cache, "m2")) ? { ...copy(true), orElse: copy(false) } : copy(false);
    const sources = sourcesOf(ecosystem, file);
    // The adapter's own sources, compiled once here against the jars, not at each start of the program.
    const compile: BuildStep = { command: "javac", args: ["-nowarn", "-encoding", "UTF-8", "-cp", join(tmp, "lib", "*"), "-d", join(tmp, "classes"), ...sources, ...javaSupport()], cwd };
    return sources.length ? [jars, compile] : [jars];
  }
  return [{ command: goBinary()!, args: ["build", "-mod=readonly", "-trimpath", "-o", join(tmp, "bin") + "/", "./..."], cwd, env: { ...process.env, ...goCaches(cache) } }];
}

/** A venv's scripts name the directory it was made in: made in `tmp`, they must name where it will be. */
function relocateVenv(tmp: string, final: string): void {
  const bin = join(tmp, "bin");
  for (const name of readdirSync(bin)) {
    const path = join(bin, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st?.isFile() || st.size > 1 << 20) continue;
    const text = readFileSync(path, "latin1");
    if (text.includes(tmp)) writeFileSync(path, text.split(tmp).join(final), { encoding: "latin1", mode: st.mode });
  }
  const cfg = join(tmp, "pyvenv.cfg");
  if (existsSync(cfg)) writeFileSync(cfg, readFileSync(cfg, "utf8").split(tmp).join(final));
}

/**
 * The manifest's environment, built if it is not: the file checked (a
 * requirements file must pin every package with its hashes), the ecosystem's
 * tools looked for, then the build into a temporary directory renamed into
 * place. A failure is a value naming the manifest, the file, and what to do or
 * the command that failed with the tail of its output; nothing is left behind.
 */
export async function buildEnvironment(manifest: string, file: string, say: (line: string) => void = () => {}, cache = cacheDirectory()): Promise<Built> {
  const named = `${manifest}: its "environment" ${file}`;
  const ecosystem = ecosystemOf(file);
  if (ecosystem === null) return { ok: false, message: `${named} is none of ${ENVIRONMENT_FILES}` };
  if (!existsSync(file)) return { ok: false, message: `${named} does not exist` };
  const had = builtEnvironment(ecosystem, file, cache);
  if (had) return { ok: true, dir: had, built: false, seconds: 0 };
  if (ecosystem === "python") {
    const bare = unhashedRequirement(readFileSync(file, "utf8"));
    if (bare)
      return {
        ok: false,
        message: `${named} must pin every package with its hashes (pip install --require-hashes), but ${bare}; make one with \`pip-compile --generate-hashes\` or \`pip hash\` (docs/adapter-protocol.md)`,
      };
  }
  // A module that requires nothing has no go.sum; one that requires something is verified against it.
  if (ecosystem === "go" && /^\s*require\b/m.test(readFileSync(file, "utf8")) && !existsSync(join(dirname(file), "go.sum")))
    return { ok: false, message: `${named} has no go.sum beside it: run \`go mod tidy\` in ${dirname(file)} and keep go.sum with go.mod` };
  const lacking = missingTools(ecosystem, file);
  if (lacking) return { ok: false, message: `${named} cannot be built here: ${lacking}` };

  const final = environmentDirectory(ecosystem, file, cache);
  // Two parts of one set-up may name one lock file (the Go adapters share a module): one build serves both.
  const already = building.get(final);
  if (already) return already;
  const build = buildInto(final, named, ecosystem, file, manifest, say, cache);
  building.set(final, build);
  try {
    return await build;
  } finally {
    building.delete(final);
  }
}

/** The builds under way in this process, by the environment's directory. */
const building = new Map<string, Promise<Built>>();

async function buildInto(final: string, named: string, ecosystem: Ecosystem, file: string, manifest: string, say: (line: string) => void, cache: string): Promise<Built> {
  const started = performance.now();
  say(`fencecheck: building ${basename(final)} for ${manifest} from ${file}`);
  try {
    const built = await buildAside(final, async (aside) => {
      await runSteps(steps(ecosystem, file, aside, final, cache));
      if (ecosystem === "python") relocateVenv(aside, final);
    });
    const seconds = (performance.now() - started) / 1000;
    say(`fencecheck: built ${final} in ${seconds.toFixed(1)} s`);
    return { ok: true, dir: final, built, seconds };
  } catch (err) {
    return { ok: false, message: `${named}: building it failed: ${(err as Error).message}` };
  }
}
