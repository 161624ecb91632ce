// The entries scripts/build.mjs bundles are the ones the code starts: a process or
// thread started on an entry missing from the list would find no bundle in dist/
// and fail only when built (the suite's in-process runs start dist/ too, but not
// every entry is started by a test).
import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ENTRIES } from "../scripts/entries.mjs";
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
    // soak/run-one.ts starts `cli/${command}` for these two.
    started.add("cli/test-jepsen").add("cli/check");
    const scripts = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    for (const command of Object.values(scripts)) for (const m of command.matchAll(/node dist\/(\S+)\.js/g)) started.add(m[1]);
    expect(started.size).toBeGreaterThan(10);
    expect([...started].filter((e) => !ENTRIES.includes(e))).toEqual([]);
    for (const e of ENTRIES) expect([e, existsSync(join(REPO, `${e}.ts`))]).toEqual([e, true]);
  });

  it("the suite starts them from dist/ (FENCECHECK_ENTRIES), which build-once brought up to date", () => {
    expect(process.env.FENCECHECK_ENTRIES).toBe("dist");
    for (const e of ENTRIES) expect(entryFile(e)).toBe(join(REPO, "dist", `${e}.js`));
    for (const e of ENTRIES) expect([e, existsSync(entryFile(e))]).toEqual([e, true]);
  });
});
