// Builds the JavaScript that every command, worker and service runs: one ESM
// bundle per entry point in dist/, our own code inlined and the npm packages left
// to node_modules; and the type declarations of the modules a package's users
// import (dist/types/, for package.json "exports"). A command then starts as plain node, without compiling
// TypeScript at each start (tsx took about 0.3 s of every start, and a run starts
// a dozen processes). `npm ci` runs this (the "prepare" script), and so do the
// commands' pre-scripts and the test suite, so dist/ follows the sources.
// No type checking here: `npm test` runs tsc.
//
//   node scripts/build.mjs [--quiet] [--if-stale]
//
// --if-stale builds only when a source is newer than the last build (the
// pre-scripts use it, so a developer's edit is never run stale, and an unchanged
// checkout pays a few milliseconds).
import { chmodSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ENTRIES, TYPED_ENTRIES } from "./entries.mjs";
import { testOptionsDeclaration } from "./api-types.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");


/** Folders that are not code the bundles are built from. */
const NOT_SOURCES = new Set(["node_modules", "dist", "test", "histories", "build", ".git", "docs"]);

/** The newest modification time among the TypeScript sources, package.json and this script. */
function newestSource() {
  let newest = Math.max(...[join(ROOT, "package.json"), fileURLToPath(import.meta.url), join(ROOT, "scripts/entries.mjs")].map((f) => statSync(f).mtimeMs));
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) {
        if (!NOT_SOURCES.has(e.name) && !e.name.startsWith(".")) walk(join(dir, e.name));
      } else if (e.name.endsWith(".ts")) newest = Math.max(newest, statSync(join(dir, e.name)).mtimeMs);
    }
  };
  walk(ROOT);
  return newest;
}

const quiet = process.argv.includes("--quiet");
const started = performance.now();
const out = join(ROOT, "dist");
const stamp = join(out, "BUILT");
if (process.argv.includes("--if-stale")) {
  let built = 0;
  try {
    built = statSync(stamp).mtimeMs;
  } catch {
    // never built
  }
  if (built > newestSource()) process.exit(0);
}
// Imported only when there is something to build: loading esbuild is most of an
// up-to-date check's cost.
const { build } = await import("esbuild");
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: ENTRIES.map((e) => `${e}.ts`),
  outdir: out,
  outbase: ".",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  // Code a command reaches only through import() (a backend's servers, a client's
  // library, docker mode) goes to chunks of its own, loaded when first used: a
  // Redis run never parses etcd's gRPC stack or dockerode, in the runner or in
  // any of its workers.
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  sourcemap: "linked",
  logLevel: "warning",
  write: false,
});
if (result.errors.length) process.exit(1);
// Each file replaced whole (written aside, then renamed over the old one): a
// soak or a run already going keeps starting workers from dist/ while a build
// runs, and must never read half a bundle.
for (const f of result.outputFiles) {
  mkdirSync(dirname(f.path), { recursive: true });
  const aside = `${f.path}.${process.pid}.tmp`;
  writeFileSync(aside, f.contents);
  renameSync(aside, f.path);
}
// Chunks of earlier builds are removed once no command started before this build
// can still load one (an hour); a soak going on keeps those it began with.
const made = new Set(result.outputFiles.map((f) => f.path));
const chunks = join(out, "chunks");
for (const f of readdirSync(chunks, { withFileTypes: true })) {
  const path = join(chunks, f.name);
  if (f.isFile() && !made.has(path) && Date.now() - statSync(path).mtimeMs > 3600_000) rmSync(path, { force: true });
}
// The bin: npm makes it executable when it installs the package; in the checkout we do.
chmodSync(join(out, "cli", "fencecheck.js"), 0o755);
await declarations();
// Stamped with the time the build started, which --if-stale compares the sources
// with: a source saved during the build counts as newer.
writeFileSync(stamp, `built by scripts/build.mjs\n`);
const startedAt = new Date(Date.now() - (performance.now() - started));
utimesSync(stamp, startedAt, startedAt);
if (!quiet) console.error(`fencecheck: built ${ENTRIES.length} entry points and the types of ${TYPED_ENTRIES.join(", ")} into dist/ in ${Math.round(performance.now() - started)} ms`);

/**
 * The .d.ts files of TYPED_ENTRIES and of the files their declarations import,
 * each made from its source alone (TypeScript's isolated declarations: a few
 * hundred milliseconds, where a type-checked emit of everything the API's code
 * reaches takes ten seconds). That asks every exported function and constant of
 * those files to state its type, which `npm test`'s type check holds them to
 * (tsconfig.check.json); here an error stops the build. TypeScript is a
 * development dependency: a checkout has it, and so does `npm pack`, which builds
 * the tarball's dist/ through the "prepare" script.
 */
async function declarations() {
  const ts = (await import("typescript")).default;
  const aside = join(out, `types.${process.pid}.tmp`);
  const compilerOptions = { module: ts.ModuleKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, allowImportingTsExtensions: true };
  const queue = TYPED_ENTRIES.map((e) => join(ROOT, `${e}.ts`));
  const done = new Set();
  const errors = [];
  // The API's options: their type, inferred from the option table in the sources, spelled out with each option's help.
  const written = { [join(ROOT, "api/test-options.ts")]: async () => testOptionsDeclaration((await import(pathToFileURL(join(out, "api/test-options.js")).href)).TEST_OPTIONS) };
  while (queue.length) {
    const file = queue.shift();
    if (done.has(file)) continue;
    done.add(file);
    const { outputText, diagnostics = [] } = written[file]
      ? { outputText: await written[file]() }
      : ts.transpileDeclaration(readFileSync(file, "utf8"), { fileName: file, reportDiagnostics: true, compilerOptions });
    errors.push(...diagnostics);
    const target = join(aside, relative(ROOT, file).replace(/\.ts$/, ".d.ts"));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, outputText);
    // A declaration imports others by the sources' names ("../store/events.ts"), which TypeScript reads as their .d.ts.
    for (const m of outputText.matchAll(/\bfrom\s+"(\.{1,2}\/[^"]+\.ts)"/g)) queue.push(resolve(dirname(file), m[1]));
  }
  if (errors.length) {
    rmSync(aside, { recursive: true, force: true });
    console.error(ts.formatDiagnostics(errors, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => "\n" }));
    console.error("fencecheck: the declarations of the package's API cannot be made file by file (above): give those exports their types");
    process.exit(1);
  }
  rmSync(join(out, "types"), { recursive: true, force: true });
  renameSync(aside, join(out, "types"));
}
