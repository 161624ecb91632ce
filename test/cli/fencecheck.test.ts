// The `fencecheck` command itself: its subcommands and their help, --version, a
// mistyped subcommand or option refused (254) naming the nearest valid one, and
// the directory relative paths mean: the one the command runs in, or, for
// fencecheck's own npm scripts (started by npm in the package's root), the one
// the user typed the command in.
import { describe, it, expect } from "vitest";
import { execFile } from "node:child_process";
import { cpSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SUBCOMMANDS } from "../../cli/commands.ts";
import { nearest, editDistance } from "../../lib/index.ts";
import { ROOT } from "../../lib/paths.ts";
import { cacheDirectory, userDirectory } from "../../lib/user-dir.ts";
import { REPO, cliArgs, cliEnv, tempRunDir } from "../helpers.ts";

/** `fencecheck ...args` (the dispatcher's own arguments, no subcommand put first). */
function fencecheck(args: string[], cwd = REPO): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cliArgs("")[0], ...args], { cwd, env: cliEnv() }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, stdout, stderr }),
    );
  });
}

describe("fencecheck", { timeout: 60_000 }, () => {
  it("--version prints the package's version; --help lists every subcommand", async () => {
    const v = await fencecheck(["--version"]);
    expect(v.code).toBe(0);
    expect(v.stdout.trim()).toBe(JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version);
    const help = await fencecheck(["--help"]);
    expect(help.code).toBe(0);
    for (const name of Object.keys(SUBCOMMANDS)) expect(help.stdout).toMatch(new RegExp(`^  ${name} `, "m"));
  });

  it.concurrent.each(Object.keys(SUBCOMMANDS))("fencecheck %s --help: its usage, exit 0", async (name) => {
    const r = await fencecheck([name, "--help"]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toMatch(new RegExp(`[Uu]sage: fencecheck ${name}\\b`));
  });

  it("a mistyped subcommand or option: 254, naming it and the nearest valid one", async () => {
    const sub = await fencecheck(["tset"]);
    expect(sub.code).toBe(254);
    expect(sub.stderr).toMatch(/unknown command "tset"; did you mean test\?/);
    const opt = await fencecheck(["test", "--nemsis", "pause"]);
    expect(opt.code).toBe(254);
    expect(opt.stderr).toMatch(/fencecheck test: unknown option --nemsis; did you mean --nemesis\?/);
    const soak = await fencecheck(["soak", "--presett", "smoke"]);
    expect(soak.stderr).toMatch(/unknown option --presett; did you mean --preset\?/);
    const none = await fencecheck([]);
    expect(none.code).toBe(254);
    expect(none.stderr).toMatch(/Usage: fencecheck <command>/);
  });

  it("resolves relative paths in the directory it runs in: a run to check, and --out", async () => {
    const here = tempRunDir("fc-cwd-");
    cpSync(join(REPO, "histories/fixtures/bad/recorded-redis-fenced-write-pause-fence-off"), join(here, "runs", "r1"), { recursive: true });
    const r = await fencecheck(["check", "runs/r1", "--out", "audit"], here);
    expect(r.code, r.stderr).toBe(1);
    expect(existsSync(join(here, "audit", "results.json"))).toBe(true);
    expect(existsSync(join(REPO, "audit"))).toBe(false);
  });
});

describe("the user's directories", () => {
  it("a command's own directory, except under fencecheck's own npm scripts, where INIT_CWD is where the user typed it", () => {
    const elsewhere = tempRunDir("fc-cwd-");
    expect(userDirectory({}, elsewhere)).toBe(elsewhere);
    // A team's script runs `fencecheck` in the team's root: that root it is, whatever INIT_CWD says.
    expect(userDirectory({ INIT_CWD: "/somewhere", npm_lifecycle_event: "soak" }, elsewhere)).toBe(elsewhere);
    // `npm run check -- x` typed in a subdirectory of our checkout: npm runs it in the root.
    const sub = join(ROOT, "examples");
    expect(userDirectory({ INIT_CWD: sub, npm_lifecycle_event: "check" }, ROOT)).toBe(sub);
    expect(userDirectory({ INIT_CWD: sub }, ROOT)).toBe(ROOT);
  });

  it("the cache is FENCECHECK_CACHE, else XDG_CACHE_HOME/fencecheck, else ~/.cache/fencecheck", () => {
    expect(cacheDirectory({ FENCECHECK_CACHE: "/c" })).toBe("/c");
    expect(cacheDirectory({ XDG_CACHE_HOME: "/x" })).toBe("/x/fencecheck");
    expect(cacheDirectory({ XDG_CACHE_HOME: "relative" })).toMatch(/\/\.cache\/fencecheck$/);
    expect(cacheDirectory({}).startsWith(ROOT)).toBe(false);
  });
});

describe("nearest", () => {
  it("counts a swap of neighbours as one edit and prefers the longer shared prefix", () => {
    expect(editDistance("tset", "test")).toBe(1);
    expect(editDistance("nemsis", "nemesis")).toBe(1);
    expect(nearest("serv", ["soak", "serve", "setup"])).toBe("serve");
    expect(nearest("x", [])).toBe(null);
  });
});
