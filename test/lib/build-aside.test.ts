// Building into the cache aside and renaming into place (lib/build-aside.ts), on a
// real directory: two builders of one thing at once leave one copy and no litter; a
// build that fails leaves nothing; what a builder that is gone left is swept, what a
// live one is making is not; a failing step names its command and output's tail.
import { describe, it, expect } from "vitest";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { buildAside, runSteps } from "../../lib/build-aside.ts";
import { sleep } from "../../lib/index.ts";
import { ownerLabel } from "../../lib/owner.ts";
import { tempRunDir } from "../helpers.ts";

const make = (ms: number, mark: string) => async (aside: string) => {
  mkdirSync(aside);
  await sleep(ms);
  writeFileSync(join(aside, "made-by"), mark);
};

describe("buildAside", () => {
  it("two builders at once: one puts its copy in place, the other's goes; nothing else is left", async () => {
    const dir = tempRunDir("fc-aside-");
    const final = join(dir, "thing");
    const [a, b] = await Promise.all([buildAside(final, make(50, "a")), buildAside(final, make(80, "b"))]);
    expect([a, b].sort()).toEqual([false, true]);
    expect(readdirSync(dir).filter((n) => n !== "logs")).toEqual(["thing"]);
    expect(await buildAside(final, make(0, "c"))).toBe(false);
  });

  it("a build that throws leaves nothing and throws on", async () => {
    const dir = tempRunDir("fc-aside-");
    const final = join(dir, "thing");
    await expect(
      buildAside(final, async (aside) => {
        mkdirSync(aside);
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    expect(readdirSync(dir).filter((n) => n !== "logs")).toEqual([]);
  });

  it("sweeps the aside directory of a builder that is gone, and keeps a live one's", async () => {
    const dir = tempRunDir("fc-aside-");
    const dead = `.building-thing@${hostname()}+4000000+1+1`;
    const live = `.building-other@${ownerLabel().replaceAll("/", "+")}+1`;
    mkdirSync(join(dir, dead));
    mkdirSync(join(dir, live));
    expect(await buildAside(join(dir, "thing"), make(0, "x"))).toBe(true);
    expect(readdirSync(dir).filter((n) => n !== "logs").sort()).toEqual([live, "thing"].sort());
  });

  it("a step that fails names its command, its exit code and the tail of its output", async () => {
    await expect(runSteps([{ command: "sh", args: ["-c", "echo one; echo two >&2; exit 3"], cwd: "/" }])).rejects.toThrow(/^`sh -c "echo one; echo two >&2; exit 3"` exited with code 3:\none\ntwo$/);
    await expect(runSteps([{ command: "false", args: [], cwd: "/", orElse: { command: "true", args: [], cwd: "/" } }])).resolves.toBeUndefined();
  });
});
