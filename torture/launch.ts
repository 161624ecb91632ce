// How a trial's run is started and how it is killed, one way each, as a user or
// a CI job starts and kills it: `fencecheck test` itself, `npm run test:jepsen`
// (npm, its shell and the runner in one process group, as in a terminal or a CI
// step), or `fencecheck soak` over a small matrix of the trial's own.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, entryArgs } from "../lib/index.ts";
import type { TrialPlan } from "./plan.ts";
import type { ProcessTree } from "./processes.ts";
import { RESOURCE_DB } from "./resource-db.ts";

export interface Launched {
  child: ChildProcess;
  /** The exit code, or the signal's name, once the spawned process has exited. */
  exited: Promise<string>;
  exitedYet(): boolean;
}

/** `fencecheck test`'s options for the trial's run. */
export function testArgs(plan: TrialPlan, store: string): string[] {
  return [
    "--backend", plan.backend, "--deploy", plan.deploy, "--nemesis", plan.nemesis,
    "--time-limit", String(plan.timeLimit), "--seed", String(plan.seed), "--store", store,
    // The store's table is read after the run, from the data directory kept for it;
    // holders on four keys writing five times each without a pause keep the store
    // busy, so that the kill may find a write mid-commit.
    ...(plan.way === "kill-resource-db" ? ["--resource", "postgres", "--keep-data", "--keys", "4", "--concurrency", "8", "--work", "0", "--writes-per-hold", "5"] : []),
  ];
}

/** The soak's matrix: the trial's configuration and one without faults, run twice each, two at a time (--jobs 2): the kill finds two runs going. */
function soakArgs(plan: TrialPlan, store: string, dir: string): string[] {
  const matrix = join(dir, "matrix.json");
  const options = { backend: plan.backend, deploy: plan.deploy };
  writeFileSync(
    matrix,
    JSON.stringify({
      name: `torture-${plan.trial}`,
      configurations: [
        { name: "faulted", options: { ...options, nemesis: plan.nemesis }, expect: "observe" },
        { name: "quiet", options: { ...options, nemesis: "none" }, expect: "observe" },
      ],
    }),
  );
  return ["--matrix", matrix, "--test-count", "2", "--time-limit", String(plan.timeLimit), "--seed", String(plan.seed), "--store", store, "--jobs", "2"];
}

/** What a trial runs, in a process group of its own (so a group kill reaches it and nothing of ours); its output goes to `dir`/output.log. */
export function launch(plan: TrialPlan, store: string, dir: string): Launched {
  const viaNpm = plan.way === "ctrl-c" || plan.way === "kill-npm-group";
  const [command, args] =
    plan.way === "kill-soak"
      ? [process.execPath, [...entryArgs("cli/fencecheck"), "soak", ...soakArgs(plan, store, dir)]]
      : viaNpm
        ? ["npm", ["run", "test:jepsen", "--", ...testArgs(plan, store)]]
        : [process.execPath, [...entryArgs("cli/fencecheck"), "test", ...testArgs(plan, store)]];
  return start(command, args, join(dir, "output.log"));
}

/** The short run that follows each trial (the sweeps of leftovers happen at a run's start): Redis, no faults, one second. */
export function launchNext(plan: TrialPlan, store: string, dir: string): Launched {
  const args = ["test", "--backend", "redis", "--nemesis", "none", "--time-limit", "1", "--deploy", plan.deploy, "--seed", String(plan.seed), "--store", store];
  return start(process.execPath, [...entryArgs("cli/fencecheck"), ...args], join(dir, "next-output.log"));
}

function start(command: string, args: string[], outputFile: string): Launched {
  const out = openSync(outputFile, "a");
  const env = { ...process.env };
  // npm's INIT_CWD would send a command of ours elsewhere (lib/user-dir.ts); every path given is absolute anyway.
  delete env.INIT_CWD;
  const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ["ignore", out, out] });
  closeSync(out);
  let done = false;
  const exited = new Promise<string>((resolve) => {
    child.once("error", (e) => ((done = true), resolve(`failed to start: ${e.message}`)));
    child.once("exit", (code, signal) => ((done = true), resolve(signal ?? String(code))));
  });
  return { child, exited, exitedYet: () => done };
}

/** SIGKILL one process; false if it was gone. */
function killPid(pid: number, sig: NodeJS.Signals = "SIGKILL"): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Kills the trial's run the plan's way; says what it hit. */
export function kill(plan: TrialPlan, run: Launched, tree: ProcessTree): string {
  const pid = run.child.pid!;
  tree.scan();
  switch (plan.way) {
    case "kill-runner":
    case "kill-soak":
      killPid(pid);
      return `SIGKILL to ${pid}`;
    case "ctrl-c":
      killPid(-pid, "SIGINT");
      return `SIGINT to process group ${pid}`;
    case "kill-npm-group":
      killPid(-pid);
      return `SIGKILL to process group ${pid}`;
    case "kill-runner-and-reaper": {
      // The reaper is the runner's child whose $0 is "fencecheck-reaper <run>" (bash -c SCRIPT $0).
      const reaper = tree.alive().find((p) => p.ppid === pid && p.args.includes(" fencecheck-reaper "));
      // The reaper first: were the runner to die first, the reaper would act on its closed pipe.
      if (reaper) killPid(reaper.pid);
      killPid(pid);
      return reaper ? `SIGKILL to reaper ${reaper.pid} and runner ${pid}` : `SIGKILL to runner ${pid} (no reaper started yet)`;
    }
    case "kill-resource-db": {
      const postmaster = tree.alive().find((p) => /\/postgres$/.test(p.args.split(" ")[0]) && p.args.includes(`/${RESOURCE_DB}`));
      if (!postmaster) return "no resource-db postmaster running: nothing killed";
      killPid(postmaster.pid);
      return `SIGKILL to the resource's postmaster ${postmaster.pid}`;
    }
  }
}
