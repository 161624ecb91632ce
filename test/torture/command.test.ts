// `npm run torture`: real runs killed for real, one line per trial and the total;
// and the walk of /proc it rests on, which must keep a process that its parent's
// death handed to init.
import { describe, expect, it } from "vitest";
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ProcessTree } from "../../torture/processes.ts";
import { REPO, cliEnv, waitFor } from "../helpers.ts";

function torture(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(REPO, "dist", "torture", "main.js"), ...args], { cwd: REPO, env: cliEnv() }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, stdout, stderr }),
    );
  });
}

describe("the torture", () => {
  it("follows a process tree through its root's death: the orphans are still its own, until killed", async () => {
    const root = spawn("sh", ["-c", "sleep 60 & sleep 61 & wait"], { detached: true, stdio: "ignore" });
    const tree = new ProcessTree(root.pid!);
    tree.watch(20);
    try {
      expect(await waitFor(() => tree.all().length === 3, 5000)).toBe(true);
      // The two children, by pid: one seen between its fork and its exec still reads as the shell.
      const children = tree.all().map((p) => p.pid).filter((pid) => pid !== root.pid).sort();
      process.kill(root.pid!, "SIGKILL");
      expect(await waitFor(() => tree.alive().length === 2, 5000)).toBe(true);
      expect(tree.alive().map((p) => p.pid).sort()).toEqual(children);
      expect(tree.killAlive().length).toBe(2);
      expect(await waitFor(() => tree.alive().length === 0, 5000)).toBe(true);
    } finally {
      tree.killAlive();
      tree.stop();
    }
  });

  it("kills two local Redis runs (SIGKILL of the runner, of npm's process group): a line each and the total, exit 0", async () => {
    const r = await torture(["--trials", "2", "--seed", "4", "--backends", "redis", "--deploys", "local", "--only", "kill-runner,kill-npm-group"]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toMatch(/^torture: 2 trials, seed 4, store \//);
    const trials = lines.filter((l) => l.startsWith("trial "));
    expect(trials).toHaveLength(2);
    for (const [i, line] of trials.entries())
      expect(line).toMatch(new RegExp(`^trial ${i + 1}/2  redis/local +nemesis \\S+ +kill-(runner|npm-group) +at (start-up|operations|teardown) \\+[\\d.]+s +watched \\d+ processes, left 0 processes, 0 containers, 0 networks  check (valid|invalid|unknown|nothing written)  CLEAN$`));
    expect(new Set(trials.map((l) => /kill-(runner|npm-group)/.exec(l)![0]))).toEqual(new Set(["kill-runner", "kill-npm-group"]));
    expect(lines).toContain("2 of 2 clean");
    // Its own temporary store goes when every trial was clean.
    expect(existsSync(lines[0].replace(/^.*store /, ""))).toBe(false);
  }, 90_000);

  it("refuses bad options (254), naming them", async () => {
    const r = await torture(["--trials", "0"]);
    expect([r.code, r.stderr]).toEqual([254, "torture: --trials must be at least 1, got 0\n"]);
  });
});
