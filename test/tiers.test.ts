// The tiers kept out of `npm test` (TIERS in vitest.config.ts) are named in five
// places besides the table: each tier's config file, its npm script and set-up,
// .ci/run's loop and the README. Held to the table here, so that a tier added,
// renamed or dropped in one place and not the others fails.
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { TIERS, type Tier } from "../vitest.config.ts";
import { REPO } from "./helpers.ts";

const tiers = Object.keys(TIERS) as Tier[];
const read = (f: string) => readFileSync(join(REPO, f), "utf8");
const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;

describe("the test tiers", () => {
  it.each(tiers)("%s: its config runs its files, its npm script runs its config after the suite's set-up, the README names it", async (t) => {
    const config = (await import(join(REPO, `vitest.${t}.config.ts`))) as { default: { test: { include: string[] } } };
    expect(config.default.test.include).toEqual([...TIERS[t]]);
    expect(scripts[`test:${t}`]).toBe(`vitest run --config vitest.${t}.config.ts`);
    expect(scripts[`pretest:${t}`]).toContain(scripts.pretest);
    // A file named (not a glob) is there: a name left behind by a move would run nothing.
    for (const f of TIERS[t].filter((f) => !f.includes("*"))) expect(existsSync(join(REPO, f)), f).toBe(true);
    // Markdown joins a code span broken over two lines with a space, as the reader sees it.
    expect(read("README.md").replace(/\s+/g, " ")).toContain(`npm run test:${t}`);
  });

  it("CI runs every tier after npm test but the library tests, whose whole runs the libraries preset's soak runs", () => {
    const loop = read(".ci/run").match(/^for tier in (.+); do$/m);
    expect(loop, ".ci/run has no `for tier in ...; do` loop").not.toBeNull();
    expect(loop![1].split(" ").sort()).toEqual(tiers.filter((t) => t !== "libraries").map((t) => `test:${t}`).sort());
  });

  it("npm test runs no file of a tier", async () => {
    const suite = (await import(join(REPO, "vitest.config.ts"))) as { default: { test: { exclude: string[] } } };
    for (const t of tiers) for (const f of TIERS[t]) expect(suite.default.test.exclude).toContain(f);
  });
});
