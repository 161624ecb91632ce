// No process is left behind: after a run, after Ctrl-C at several moments (one of
// them while a worker is SIGSTOPped), after the runner is SIGKILLed, and after a
// start that fails. Every process of a run names its run directory on its command
// line, so pgrep on the store finds any survivor.
import { describe, it, expect } from "vitest";
import { createServer, type Server } from "node:net";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, waitFor, runCli, latestRun, readNdjson, survivors } from "../helpers.ts";

const quick = ["--concurrency", "4", "--workers", "2", "--ttl", "300", "--work", "5", "--rate", "20"];

function historyEvents(store: string): Array<Record<string, unknown>> {
  return readNdjson(join(latestRun(store), "history.ndjson")).slice(1);
}

/** Finds a free port p and holds p + 1, retrying when another test file owns p + 1 (files run in parallel). */
async function takeNextPort(): Promise<{ taken: Server; base: number }> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const p = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const port = (probe.address() as { port: number }).port;
        probe.close(() => resolve(port));
      });
    });
    const taken: Server = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      taken.once("error", () => resolve(false));
      taken.listen(p + 1, "127.0.0.1", () => resolve(true));
    });
    if (ok) return { taken, base: p };
  }
  throw new Error("no pair of free consecutive ports found");
}

describe("teardown", () => {
  it("a finished run leaves no process", async () => {
    const store = tempRunDir("fc-store-");
    const run = runCli("test", [...quick, "--time-limit", "2", "--nemesis", "pause", "--nemesis-interval", "0.5", "--store", store]);
    const code = await run.exit;
    expect([0, 1]).toContain(code);
    expect(await survivors(store, 5000)).toEqual([]);
    expect(historyEvents(store).length).toBeGreaterThan(10);
  });

  it("Ctrl-C mid-run, with a worker SIGSTOPped, leaves no process and keeps the history", async () => {
    const store = tempRunDir("fc-store-");
    const run = runCli("test", [...quick, "--time-limit", "60", "--nemesis", "pause", "--nemesis-interval", "0.2", "--pause-min", "3000", "--pause-max", "4000", "--store", store]);
    const history = () => join(latestRun(store), "history.ndjson");
    // Wait until a pause is in force.
    expect(await waitFor(() => existsSync(history()) && readFileSync(history(), "utf8").includes("start-pause"), 30_000)).toBe(true);
    process.kill(-run.child.pid!, "SIGINT");
    expect(await run.exit, run.stderr()).toBe(130);
    expect(await survivors(store, 5000)).toEqual([]);
    const events = historyEvents(store);
    expect(events.some((e) => e.f === "start-pause")).toBe(true);
    // The final heal ran: the pause was ended and recorded.
    expect(events.some((e) => e.f === "stop-pause")).toBe(true);
    expect(run.stderr()).toMatch(/Check it with: fencecheck check \//);
  });

  it("Ctrl-C during start-up leaves no process", async () => {
    const store = tempRunDir("fc-store-");
    const run = runCli("test", [...quick, "--time-limit", "60", "--store", store]);
    await waitFor(() => existsSync(join(latestRun(store), "run.json")), 20_000, 10);
    process.kill(-run.child.pid!, "SIGINT");
    expect(await run.exit, run.stderr()).toBe(130);
    expect(await survivors(store, 5000)).toEqual([]);
  });

  it("a SIGKILLed runner leaves no process (the reaper) and a checkable prefix of the history", async () => {
    const store = tempRunDir("fc-store-");
    const run = runCli("test", [...quick, "--time-limit", "60", "--nemesis", "pause", "--nemesis-interval", "0.3", "--pause-min", "2000", "--pause-max", "3000", "--store", store]);
    const history = () => join(latestRun(store), "history.ndjson");
    expect(await waitFor(() => existsSync(history()) && readFileSync(history(), "utf8").includes("start-pause"), 30_000)).toBe(true);
    const size = statSync(history()).size;
    process.kill(run.child.pid!, "SIGKILL");
    await run.exit;
    expect(await survivors(store, 5000)).toEqual([]);
    expect(statSync(history()).size).toBeGreaterThanOrEqual(size);
    const check = runCli("check", [latestRun(store)]);
    expect([0, 1, 2]).toContain(await check.exit);
  });

  it("a start that fails on a taken port leaves no process", async () => {
    const store = tempRunDir("fc-store-");
    // The resource takes the base port; what comes next (the fault proxy) finds its port taken.
    const { taken, base } = await takeNextPort();
    try {
      const run = runCli("test", [...quick, "--time-limit", "5", "--port-base", String(base), "--store", store]);
      expect(await run.exit).toBe(255);
      expect(run.stderr()).toMatch(/fencecheck test failed: /);
      expect(run.stderr()).toMatch(/EADDRINUSE|Address already in use/);
      expect(await survivors(store, 5000)).toEqual([]);
    } finally {
      taken.close();
    }
  });

  it("a start that fails on a missing binary leaves no process", async () => {
    const store = tempRunDir("fc-store-");
    const run = runCli("test", [...quick, "--time-limit", "5", "--store", store], { FENCECHECK_REDIS_SERVER: "/nonexistent/redis-server" });
    expect(await run.exit).toBe(255);
    expect(run.stderr()).toContain("/nonexistent/redis-server not found");
    expect(await survivors(store, 5000)).toEqual([]);
  });
});
