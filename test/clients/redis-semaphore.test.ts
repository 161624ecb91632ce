// redis-semaphore's Mutex, as its README uses it, under SIGSTOP pauses: a lease
// like any other, so a paused holder writes after the next one (its fences from
// --fence-source single make that visible), and fencing at the resource refuses it.
import { describe, it, expect } from "vitest";
import { join } from "node:path";
import { readFileSync, realpathSync } from "node:fs";
import { tempRunDir, runCli, latestRun } from "../helpers.ts";

const run = ["--client", "redis-semaphore", "--nemesis", "pause", "--nemesis-interval", "1", "--time-limit", "8", "--seed", "3"];
const results = (store: string) => JSON.parse(readFileSync(join(realpathSync(latestRun(store)), "results.json"), "utf8"));

describe("--client redis-semaphore", () => {
  it("without fencing a paused holder's write is accepted after the next holder's", async () => {
    const store = tempRunDir("fc-rsem-");
    const cli = runCli("test-jepsen", [...run, "--fence", "off", "--fence-source", "single", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(1);
    expect(results(store).anomaly_types).toContain("stale-write-accepted");
  });

  it("with fences from one Redis counter and fencing on, the run is valid", async () => {
    const store = tempRunDir("fc-rsem-");
    const cli = runCli("test-jepsen", [...run, "--fence-source", "single", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    expect(results(store).valid).toBe(true);
  });

  it("--fence on without a fence source is refused: it issues none", async () => {
    const cli = runCli("test-jepsen", [...run, "--store", tempRunDir("fc-rsem-")]);
    expect(await cli.exit).toBe(254);
    expect(cli.stderr()).toMatch(/--client redis-semaphore issues no fencing tokens/);
  });
});
