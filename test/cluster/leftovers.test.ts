// A runner SIGKILLed together with its reaper (a CI step's `kill -9 -- -PGID`,
// the OOM killer) leaves its servers running, and its paused workers stopped:
// nothing of the run is left to kill them. Every process a run starts carries its
// runner's owner label (FENCECHECK_OWNER), and the next run, or `fencecheck
// reap`, kills those whose owner is gone, and none of a run still going. Real
// runs, real SIGKILLs, /proc read here independently of the sweep's own reading.
//
// Every run sweeps as it starts, so on a machine busy with other test files'
// runs one of those may sweep a dead run's leftovers a moment before the run
// under test does: what that run names as swept is then checked to be the dead
// run's, and that nothing of the dead run is left, which no one but a sweep can bring about.
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirOwner, noteDirOwner, ownerLabel } from "../../lib/owner.ts";
import { ProcessGroup } from "../../cluster/processes.ts";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { latestRun, procState as state, readNdjson, runCli, storedRun, tempRunDir, waitFor, type CliRun } from "../helpers.ts";

const OWNER = fileURLToPath(new URL("./fixtures/sweep-owner.ts", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const quick = ["--backend", "redis", "--concurrency", "4", "--workers", "2", "--ttl", "300", "--work", "5", "--rate", "20", "--nemesis", "pause", "--nemesis-interval", "0.3"];

interface Marked {
  pid: number;
  command: string;
}

/** The live processes whose FENCECHECK_OWNER names `runner` (a pid), read from /proc now. */
function markedBy(runner: number): Marked[] {
  const found: Marked[] = [];
  for (const d of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      if (state(Number(d)) === "Z") continue;
      const owner = readFileSync(`/proc/${d}/environ`, "utf8").split("\0").find((v) => v.startsWith("FENCECHECK_OWNER="));
      if (owner?.split("/")[1] !== String(runner)) continue;
      found.push({ pid: Number(d), command: readFileSync(`/proc/${d}/cmdline`, "utf8").replace(/\0/g, " ").trim() });
    } catch {
      // Gone while we looked, or not ours to read.
    }
  }
  return found;
}

/** The pid of the reaper whose label ($0: "fencecheck-reaper <run directory>") starts with `label`. */
function reaperOf(label: string): number | undefined {
  for (const d of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      if (readFileSync(`/proc/${d}/cmdline`, "utf8").includes(`fencecheck-reaper ${label}`)) return Number(d);
    } catch {
      // gone
    }
  }
  return undefined;
}

/** A run in a store of its own, once its clients are at work (so its servers are up). */
async function startRun(timeLimitS: number): Promise<{ store: string; run: CliRun }> {
  const store = tempRunDir("fc-sweep-");
  chmodSync(store, 0o755);
  const run = runCli("test", [...quick, "--time-limit", String(timeLimitS), "--store", store]);
  const history = () => join(latestRun(store), "history.ndjson");
  const up = await waitFor(() => existsSync(history()) && readNdjson(history()).length > 10, 30_000);
  expect(up, run.stderr()).toBe(true);
  return { store, run };
}

/** SIGKILL a runner and its reaper together; what the run had started, as it was just before. */
async function killWithReaper(a: { store: string; run: CliRun }): Promise<Marked[]> {
  const reaper = reaperOf(`${a.store}/`);
  expect(reaper).toBeDefined();
  // Taken before the kill: once the runner is gone, another test's run starting
  // at that moment may sweep these first (its own run.json records it).
  const before = markedBy(a.run.child.pid!);
  process.kill(a.run.child.pid!, "SIGKILL");
  process.kill(reaper!, "SIGKILL");
  await a.run.exit;
  return before;
}

describe("leftovers of runs killed with their reaper", () => {
  it("the next run kills them and records them; a run still going keeps its processes and its verdict", async () => {
    const [dead, live] = await Promise.all([startRun(60), startRun(8)]);
    const leftovers = await killWithReaper(dead);
    // Without a sweep these would run for ever: the proof that there is something to sweep.
    expect(leftovers.map((p) => p.command).join("\n")).toMatch(/^redis-server /m);
    const liveBefore = markedBy(live.run.child.pid!).map((p) => p.pid);
    expect(liveBefore.length).toBeGreaterThan(2);

    const next = tempRunDir("fc-sweep-");
    const b = runCli("test", [...quick, "--time-limit", "2", "--store", next]);
    expect([0, 1], b.stderr()).toContain(await b.exit);
    expect(markedBy(dead.run.child.pid!)).toEqual([]);
    const swept = (storedRun(next).run.swept_processes ?? []) as Array<{ pid: number; command: string; owner: string }>;
    const leftoverPids = leftovers.map((p) => p.pid);
    // Only the dead run's: whatever another test's run may have swept at the same moment is another dead owner's.
    const ofDead = swept.filter((p) => p.owner.split("/")[1] === String(dead.run.child.pid));
    for (const p of ofDead) expect(leftoverPids).toContain(p.pid);
    for (const p of swept) expect(liveBefore).not.toContain(p.pid);
    if (swept.length) expect(b.stderr()).toMatch(/fencecheck: killed \d+ process(es)? \(pid [\d, ]+\) left by runs that are gone/);

    // The live run lost nothing to the sweep and ends as a run does.
    expect(await live.run.exit, live.run.stderr()).toBeLessThanOrEqual(1);
    expect(JSON.parse(readFileSync(join(realpathSync(latestRun(live.store)), "results.json"), "utf8")).valid).toBeTypeOf("boolean");
    expect(markedBy(live.run.child.pid!)).toEqual([]);
  });

  it("fencecheck reap kills them too and lists each", async () => {
    // Any run another test file starts meanwhile sweeps them too: until one is
    // left for reap to find, start another (in a quiet suite, the first is).
    let dead = await startRun(60);
    let leftovers = await killWithReaper(dead);
    const hasServer = (l: Marked[]): boolean => l.some((p) => p.command.startsWith("redis-server "));
    for (let attempt = 1; attempt < 4 && !hasServer(leftovers); attempt++) {
      dead = await startRun(60);
      leftovers = await killWithReaper(dead);
    }
    expect(leftovers.map((p) => p.command).join("\n")).toMatch(/^redis-server /m);
    const reap = runCli("reap", []);
    expect(await reap.exit, reap.stderr()).toBe(0);
    expect(reap.stdout()).toMatch(/^Killed \d+ process\(es\) of runs that are gone\.$/m);
    expect(markedBy(dead.run.child.pid!)).toEqual([]);
    const listed = [...reap.stdout().matchAll(/^ {2}pid (\d+) /gm)].map((m) => Number(m[1]));
    // Each of the dead run's it names, it names with its command.
    for (const p of leftovers.filter((l) => listed.includes(l.pid))) expect(reap.stdout()).toContain(`pid ${p.pid} ${p.command.slice(0, 40)}`);
  });

  it("a frozen child that lost the mark goes with its marked parent, and the directory the reaper would have removed goes too", async () => {
    /** A miniature runner killed with its reaper: its frozen parent and child, and its directory outside. */
    const killedOwner = async (): Promise<{ parent: number; child: number; outside: string }> => {
      const dir = tempRunDir("fc-sweep-");
      const owner = spawn(process.execPath, ["--import", TSX, OWNER, dir], { stdio: ["ignore", "pipe", "inherit"] });
      const exited = new Promise((resolve) => owner.once("exit", resolve));
      const left = JSON.parse(await new Promise<string>((resolve) => owner.stdout.once("data", (d) => resolve(String(d)))));
      const marked = markedBy(owner.pid!).map((p) => p.pid);
      expect(marked).toContain(left.parent);
      expect(marked).not.toContain(left.child);
      // Its reaper, looked for until it shows (one CI run on a loaded machine did
      // not find it at the first look); if it never does, nothing is left to clean
      // up after the owner, which is what the test wants anyway.
      let reaper: number | undefined;
      await waitFor(() => (reaper = reaperOf(`${dir}\0`)) !== undefined, 5000);
      process.kill(owner.pid!, "SIGKILL");
      if (reaper !== undefined) process.kill(reaper, "SIGKILL");
      await exited;
      return left;
    };
    const gone = (p: number): boolean => [null, "Z"].includes(state(p));
    const started: number[] = [];
    try {
      // Any run another test file starts meanwhile sweeps them too (a sweep is
      // the only thing that can take both and the directory): until a set is
      // left for reap to find, make another (in a quiet suite, the first is).
      let left = await killedOwner();
      started.push(left.parent, left.child);
      for (let attempt = 1; attempt < 4 && ![state(left.parent), state(left.child)].every((s) => s === "T"); attempt++) {
        expect(await waitFor(() => gone(left.parent) && gone(left.child) && !existsSync(left.outside), 3000)).toBe(true);
        left = await killedOwner();
        started.push(left.parent, left.child);
      }
      const { parent, child, outside } = left;
      // Nothing is left to thaw them: frozen for ever without a sweep.
      expect([state(parent), state(child), existsSync(outside)]).toEqual(["T", "T", true]);
      const reap = runCli("reap", []);
      expect(await reap.exit, reap.stderr()).toBe(0);
      expect(await waitFor(() => gone(parent) && gone(child), 3000)).toBe(true);
      expect(existsSync(outside)).toBe(false);
    } finally {
      // A failed expectation leaves nothing running either.
      for (const p of started) if (!gone(p)) process.kill(p, "SIGKILL");
    }
  });

  it("a directory made outside the run directory goes once its runner is gone, though no process names it (a runner killed in its teardown); a live runner's stays, and so does one kept with --keep-data", async () => {
    // A runner that notes its directory and is gone: a short-lived process's label.
    const gone = spawn("sleep", ["30"]);
    const goneLabel = ownerLabel(gone.pid!);
    gone.kill("SIGKILL");
    await new Promise((r) => gone.once("exit", r));
    const [dead, live, kept] = [0, 1, 2].map(() => mkdtempSync(join(tmpdir(), "fencecheck-test-owned-")));
    try {
      writeFileSync(join(dead, ".fencecheck-owner"), goneLabel);
      noteDirOwner(live);
      // --keep-data: the group that made it noted its runner (this process), and
      // dropped the note when told to keep it, so no later sweep can take it.
      const group = new ProcessGroup(tempRunDir());
      group.removeAtTeardown(kept);
      expect(dirOwner(kept)).toBe(ownerLabel());
      group.keepDirs();
      await group.stopAll();
      expect(existsSync(kept)).toBe(true);
      expect(dirOwner(kept)).toBeNull();
      const reap = runCli("reap", []);
      expect(await reap.exit, reap.stderr()).toBe(0);
      expect(existsSync(dead), reap.stdout()).toBe(false);
      expect(existsSync(live)).toBe(true);
      expect(existsSync(kept)).toBe(true);
    } finally {
      for (const d of [dead, live, kept]) rmSync(d, { recursive: true, force: true });
    }
  });
});
