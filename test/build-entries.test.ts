// The entries scripts/build.mjs bundles are the ones the code starts: a process or
// thread started on an entry missing from the list would find no bundle in dist/
// and fail only when built (the suite's in-process runs start dist/ too, but not
// every entry is started by a test).
import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ENTRIES, TYPED_ENTRIES } from "../scripts/entries.mjs";
import { SUBCOMMANDS } from "../cli/commands.ts";
import { entryFile } from "../lib/index.ts";
import { REPO } from "./helpers.ts";

/** Every .ts file of the project but the tests. */
function sources(dir = REPO): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return ["node_modules", "dist", "test", "histories", ".git"].includes(e.name) ? [] : sources(join(dir, e.name));
    return e.name.endsWith(".ts") ? [join(dir, e.name)] : [];
  });
}

describe("the built entries", () => {
  it("list every entry the code starts by name and every command of package.json, and each is a source", () => {
    const started = new Set<string>();
    for (const file of sources())
      for (const m of readFileSync(file, "utf8").matchAll(/\b(?:entryArgs|entryFile|startWorker)\("([^"]+)"/g)) started.add(m[1]);
    // `fencecheck` loads each subcommand's module by the path its table gives.
    for (const c of Object.values(SUBCOMMANDS)) started.add(c.entry);
    // What a package's users import (package.json "exports").
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { exports: Record<string, string | { default: string }>; bin: Record<string, string> };
    for (const target of Object.values(pkg.exports)) {
      const m = /^\.\/dist\/(.+)\.js$/.exec(typeof target === "string" ? target : target.default);
      if (m) started.add(m[1]);
    }
    for (const bin of Object.values(pkg.bin)) started.add(bin.replace(/^dist\//, "").replace(/\.js$/, ""));
    const scripts = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    for (const command of Object.values(scripts)) for (const m of command.matchAll(/node dist\/(\S+)\.js/g)) started.add(m[1]);
    expect(started.size).toBeGreaterThan(10);
    expect([...started].filter((e) => !ENTRIES.includes(e))).toEqual([]);
    for (const e of ENTRIES) expect([e, existsSync(join(REPO, `${e}.ts`))]).toEqual([e, true]);
  });

  it("the package's exports have their bundles and their type declarations in dist/", () => {
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { exports: Record<string, string | { types: string; default: string }> };
    const typed = Object.values(pkg.exports).filter((t): t is { types: string; default: string } => typeof t !== "string");
    expect(typed.map((t) => t.types.replace(/^\.\/dist\/types\/(.+)\.d\.ts$/, "$1")).sort()).toEqual([...TYPED_ENTRIES].sort());
    for (const t of typed) for (const f of [t.types, t.default]) expect([f, existsSync(join(REPO, f))]).toEqual([f, true]);
  });

  it("the suite starts them from dist/ (FENCECHECK_ENTRIES), which build-once brought up to date", () => {
    expect(process.env.FENCECHECK_ENTRIES).toBe("dist");
    for (const e of ENTRIES) expect(entryFile(e)).toBe(join(REPO, "dist", `${e}.js`));
    for (const e of ENTRIES) expect([e, existsSync(entryFile(e))]).toEqual([e, true]);
  });
});
