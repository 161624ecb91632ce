// The API's TestOptions follows the options' declarations: it is inferred from
// them, so a program that passes an option a value its declaration does not take
// fails to compile, and changing a declaration changes what compiles. Checked
// with the compiler itself, on a program that uses the API (a probe file), first
// against the declarations as they are, then with one declaration changed in
// memory (--pg-pooler's choices). The declaration the package publishes
// (dist/types/api/test-options.d.ts, written by the build with each option's
// help) must be the same type.
import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { REPO } from "../helpers.ts";

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

const compilerOptions = (() => {
  const config = ts.readConfigFile(join(REPO, "tsconfig.check.json"), ts.sys.readFile);
  return ts.parseJsonConfigFileContent(config.config, ts.sys, REPO).options;
})();

let previous: ts.Program | undefined;
/** The uses (by index) that do not compile, with the sources as they are but for `changed`. */
function failing(files: Record<string, string>, root = PROBE): number[] {
  const host = ts.createCompilerHost(compilerOptions);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  host.readFile = (f) => files[f] ?? read(f);
  host.fileExists = (f) => f in files || exists(f);
  const program = ts.createProgram([root], compilerOptions, host, previous);
  previous = program;
  const source = program.getSourceFile(root)!;
  const lines = ts.getPreEmitDiagnostics(program, source).map((d) => source.getLineAndCharacterOfPosition(d.start ?? 0).line);
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
