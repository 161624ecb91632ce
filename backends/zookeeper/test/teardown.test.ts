// No ZooKeeper server outlives its run: the JVMs are children of the run's
// process group like every server, so a runner SIGKILLed mid-run leaves none (the
// reaper kills them), and Ctrl-C stops them with everything else. Each JVM names
// its run directory on its command line (its zoo.cfg, its hosts file).
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, processesMentioning, waitFor, runCli, latestRun } from "../../../test/helpers.ts";

const args = ["--backend", "zookeeper", "--concurrency", "4", "--workers", "2", "--work", "5", "--time-limit", "60", "--nemesis", "none"];

/** Starts a run and waits until its clients have acquired the lock: the servers are up. */
async function running(store: string) {
  const run = runCli("test", [...args, "--store", store]);
  const history = () => join(latestRun(store), "history.ndjson");
  expect(await waitFor(() => existsSync(history()) && readFileSync(history(), "utf8").includes('"type":"ok","f":"acquire"'), 60_000), run.stderr()).toBe(true);
  expect(processesMentioning(store).filter((p) => p.includes("QuorumPeerMain"))).toHaveLength(3);
  return run;
}

describe("ZooKeeper teardown", () => {
  it("a SIGKILLed runner leaves no ZooKeeper server (the reaper)", async () => {
    const store = tempRunDir("fc-zk-kill-");
    const run = await running(store);
    process.kill(run.child.pid!, "SIGKILL");
    await run.exit;
    expect(await waitFor(() => processesMentioning(store).length === 0, 10_000)).toBe(true);
  }, 90_000);

  it("Ctrl-C stops the servers with the run", async () => {
    const store = tempRunDir("fc-zk-int-");
    const run = await running(store);
    process.kill(-run.child.pid!, "SIGINT");
    expect(await run.exit, run.stderr()).toBe(130);
    expect(await waitFor(() => processesMentioning(store).length === 0, 10_000)).toBe(true);
  }, 90_000);
});
