// The generic machinery knows no backend by name: every fact about a lock service
// or one of its shipped clients is declared in its folder (backends/NAME/) and
// read through the registry (backends/index.ts), so adding a backend is a folder
// and a line. This scans the generic folders' string literals and template texts
// (not comments: saying why in words of the field is welcome) for the name of a
// backend or of a shipped client, and their imports for a backend's folder.
//
// Allowed: api/adapter.ts re-exports the Redis lock's scripts, which a user's
// Redis adapter may run (examples/redis-lock-adapter.ts): the package's face, not
// machinery.
//
// Exempt, and why:
// - backends/: each backend's own folder, and the registry.
// - scenarios/: the failure catalogue, rows of data that each name the backend
//   and client they run (K1 on redis, F2 on redlock).
// - experiments/, bench/: the lab's studies and benchmarks measure named
//   services (Redis keys against etcd keys, the proxy in front of a redis-server).
// - torture/: its trials are runs of named backends.
// - scripts/, examples/, adapters/, docs/, test/: tools, material for users,
//   the adapter programs (each says which backend it serves) and the tests.
// - soak/presets/*.json: matrices of configurations, data.
import { describe, it, expect } from "vitest";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { BACKEND_NAMES, CLIENTS } from "../../backends/index.ts";
import { REPO } from "../helpers.ts";

/** The folders of the generic machinery. */
export const GENERIC = ["api", "checker", "cli", "clients", "cluster", "core", "docker", "lib", "nemesis", "proxy", "reports", "resource", "runner", "serve", "setup", "soak", "store", "toxiproxy", "workloads"];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** A module specifier: of an import or export declaration, or of import(). */
const isSpecifier = (node: ts.Node): boolean =>
  (ts.isImportDeclaration(node.parent) || ts.isExportDeclaration(node.parent)) && node.parent.moduleSpecifier === node
    ? true
    : ts.isCallExpression(node.parent) && node.parent.expression.kind === ts.SyntaxKind.ImportKeyword;

/** Every string literal and template text of a TypeScript file, with its line; module specifiers apart. */
function texts(file: string): { strings: Array<{ line: number; text: string }>; imports: Array<{ line: number; text: string }> } {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
  const strings: Array<{ line: number; text: string }> = [];
  const imports: Array<{ line: number; text: string }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node))
      (isSpecifier(node) ? imports : strings).push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: node.text });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { strings, imports };
}

/** A name standing as a word of its own (not inside "fencecheck-redis-..." or "prefix"). */
const named = (text: string, name: string): boolean => new RegExp(`(^|[^a-z0-9_-])${name.replace(/[-]/g, "\\-")}($|[^a-z0-9_-])`, "i").test(text);

export function namesIn(folders: readonly string[], names: readonly string[]): string[] {
  const found: string[] = [];
  for (const folder of folders)
    for (const file of sources(join(REPO, folder)))
      for (const { line, text } of texts(file).strings) {
        const hit = names.find((n) => named(text, n));
        if (hit) found.push(`${relative(REPO, file)}:${line}: "${hit}" in ${JSON.stringify(text.slice(0, 80))}`);
      }
  return found;
}

/** A module specifier of a backend's folder (anything under backends/ but the registry). */
export const importsABackend = (specifier: string): boolean => /(^|\/)backends\/(?!index\.ts$)/.test(specifier);

/** Imports of a backend's folder (anything under backends/ but the registry). */
export function backendImportsIn(folders: readonly string[]): string[] {
  const found: string[] = [];
  for (const folder of folders)
    for (const file of sources(join(REPO, folder)))
      for (const { line, text } of texts(file).imports)
        if (importsABackend(text)) found.push(`${relative(REPO, file)}:${line}: ${text}`);
  return found;
}

describe("the generic machinery", () => {
  const names = [...BACKEND_NAMES, ...Object.keys(CLIENTS)];

  it("names no backend and no shipped client in a string", () => {
    expect(namesIn(GENERIC, names)).toEqual([]);
  });

  it("imports no backend's folder, only the registry", () => {
    expect(backendImportsIn(GENERIC)).toEqual(["api/adapter.ts:16: ../backends/redis/scripts.ts"]);
  });

  it("would see one: the scan finds a name where it stands", () => {
    expect(named("--backend redis only", "redis")).toBe(true);
    expect(named(`${"x"}: etcd-queue`, "etcd-queue")).toBe(true);
    expect(named("fencecheck-redis-1", "redis")).toBe(false);
    expect(namesIn(["backends/redis"], names).length).toBeGreaterThan(0);
    expect(importsABackend("../backends/redis/client.ts")).toBe(true);
    expect(importsABackend("../backends/index.ts")).toBe(false);
  });
});
