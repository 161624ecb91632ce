// The type check of the sources, tests and scripts (tsconfig.check.json, as
// `npm run typecheck`), as one test of the package tier (`npm run test:package`,
// vitest.config.ts says why it left `npm test`): it runs beside the other files
// rather than before all of them, which on two cores was 17 s of the suite's wall
// time spent on nothing else.
//
// Then the API's TestOptions, which follows the options' declarations: it is
// inferred from them, so a program that passes an option a value its declaration
// does not take fails to compile, and changing a declaration changes what
// compiles. Checked with the compiler itself, on a program that uses the API (a
// probe file), first against the declarations as they are, then with one
// declaration changed in memory (--pg-pooler's choices). The declaration the
// package publishes (dist/types/api/test-options.d.ts, written by the build with
// each option's help) must be the same type.
//
// Both ask one compiler, in this process: the project's files are read and parsed
// once (the programs with the probes share their parsed files), where a second
// start of the compiler parsed them all again (24 s of the suite on two cores).
import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { REPO } from "./helpers.ts";

const CONFIG = join(REPO, "tsconfig.check.json");
const config = (() => {
  const read = ts.readConfigFile(CONFIG, ts.sys.readFile);
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, "\n"));
  return ts.parseJsonConfigFileContent(read.config, ts.sys, REPO, undefined, CONFIG);
})();

/** Each file parsed once, whichever program reads it first; a program given another text for a file parses that text. */
const parsed = new Map<string, ts.SourceFile>();
let previous: ts.Program | undefined;

/** The project's program as tsconfig.check.json makes it, with `files` read from memory (added as roots when they are not the project's). */
function program(files: Record<string, string> = {}): ts.Program {
  const host = ts.createCompilerHost(config.options);
  const [read, exists, get] = [host.readFile.bind(host), host.fileExists.bind(host), host.getSourceFile.bind(host)];
  host.readFile = (f) => files[f] ?? read(f);
  host.fileExists = (f) => f in files || exists(f);
  host.getSourceFile = (f, language, onError, create) => {
    if (f in files) return ts.createSourceFile(f, files[f], language);
    if (!parsed.has(f)) {
      const source = get(f, language, onError, create);
      if (!source) return undefined;
      parsed.set(f, source);
    }
    return parsed.get(f);
  };
  const rootNames = [...new Set([...config.fileNames, ...Object.keys(files)])];
  previous = ts.createProgram({ rootNames, options: config.options, host, oldProgram: previous, configFileParsingDiagnostics: config.errors });
  return previous;
}

describe("the type check", () => {
  it("tsc finds no type error (tsconfig.check.json)", async () => {
    // What `tsc --noEmit` reports (ts.getPreEmitDiagnostics): the configuration's,
    // the options', and every file's syntactic and semantic errors. Asked file by
    // file, with the event loop let run between files: the whole check at once
    // held this test file's process for 33 s, and for 99 s on a busy machine,
    // where vitest's own messages to it time out after 60 s (the run then fails
    // with "Timeout calling onTaskUpdate", every test passed).
    const p = program();
    const files = p.getSourceFiles();
    const errors: ts.Diagnostic[] = [...p.getConfigFileParsingDiagnostics(), ...p.getOptionsDiagnostics()];
    for (const f of files) errors.push(...p.getSyntacticDiagnostics(f));
    errors.push(...p.getGlobalDiagnostics());
    for (const f of files) {
      errors.push(...p.getSemanticDiagnostics(f));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const said = ts.formatDiagnostics(errors, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => REPO, getNewLine: () => "\n" });
    expect(errors.length, said).toBe(0);
  }, 180_000);
});

const PROBE = join(REPO, "api", "types-probe.ts");
const DECLARES_POOLER = join(REPO, "backends", "postgres", "index.ts");

/** The probe's lines, each one use: those marked `wrong` must fail to compile, the others compile. */
const USES = [
  `{ backend: "postgres", pgPooler: "pgbouncer" }`,
  `{ pgPooler: "odyssey" }`,
  `{ lock: "semaphore:3", nemesis: ["pause", "kill"], fence: "on", timeLimit: 5, partition: "isolate-one" }`,
  `{ backend: "consul" }`,
  `{ timeLimit: "5" }`,
  `{ lock: "semaphore:x" }`,
  `{ nemesis: ["meteor"] }`,
  `{ frobnicate: 1 }`,
  `{ redisPersistence: "always", releaseGap: 10 }`,
];
const probe = ["import type { TestOptions } from \"./index.ts\";", ...USES.map((u, i) => `export const use${i}: TestOptions = ${u};`)].join("\n");

/** The uses (by index) that do not compile, with the sources as they are but for `files`. */
function failing(files: Record<string, string>): number[] {
  const source = program(files).getSourceFile(PROBE)!;
  const lines = ts.getPreEmitDiagnostics(previous!, source).map((d) => source.getLineAndCharacterOfPosition(d.start ?? 0).line);
  return [...new Set(lines)].map((l) => l - 1).sort((a, b) => a - b);
}

describe("the API's TestOptions", () => {
  it("refuses to compile a use the options' declarations do not allow, and compiles the others", () => {
    expect(failing({ [PROBE]: probe })).toEqual([1, 3, 4, 5, 6, 7]);
  }, 120_000);

  it("follows a change to a declaration: --pg-pooler's choices changed, the old value no longer compiles and the new one does", () => {
    const declared = readFileSync(DECLARES_POOLER, "utf8");
    const changed = declared.replace(`choices: ["none", "pgbouncer"]`, `choices: ["none", "odyssey"]`);
    expect(changed).not.toBe(declared);
    expect(failing({ [PROBE]: probe, [DECLARES_POOLER]: changed })).toEqual([0, 3, 4, 5, 6, 7]);
  }, 120_000);

  it("is the type the package publishes, written by the build with each option's help", () => {
    const published = join(REPO, "dist", "types", "api", "test-options.d.ts");
    const text = readFileSync(published, "utf8");
    expect(text).toContain("/** lock service to test (default: redis) */");
    const same = [
      `import type { TestOptions as Inferred } from "./index.ts";`,
      `import type { TestOptions as Published } from ${JSON.stringify(published)};`,
      `type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;`,
      `export const keys: Same<keyof Inferred, keyof Published> = true;`,
      `export const values: Same<Required<Inferred>, Required<Published>> = true;`,
    ].join("\n");
    expect(failing({ [PROBE]: same })).toEqual([]);
  }, 120_000);
});
