// Whole runs against the run's own Postgres: its faults (a killed server started
// again on its data directory, a frozen server with its backends, frozen
// clients) are recorded, fencing keeps the verdict valid, and nothing of the
// server outlives the run, even when the runner is SIGKILLed.
import { describe, it, expect } from "vitest";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { jepsenRun, latestRun, processesMentioning, runCli, tempRunDir, waitFor } from "../helpers.ts";

const quick = ["--backend", "postgres", "--concurrency", "4", "--workers", "2", "--ttl", "400", "--work", "5", "--rate", "20", "--acquire-timeout", "500", "--nemesis-interval", "0.6", "--grace", "2"];

async function noSurvivors(needle: string): Promise<string[]> {
  await waitFor(() => processesMentioning(needle).length === 0, 8000);
  return processesMentioning(needle);
}

describe("postgres runs", () => {
  it("postgres-lease under kill and pause-server: valid with fencing, the server restarted on its data, nothing left", async () => {
    const r = await jepsenRun([...quick, "--client", "postgres-lease", "--nemesis", "kill,pause-server", "--time-limit", "4", "--fence", "on"], "fc-pg-");
    expect(r.exit, r.output).toBe(0);
    expect(r.results?.valid).toBe(true);
    const faults = r.history.filter((e) => e.process === "nemesis").map((e) => e.f);
    expect(faults).toContain("kill");
    expect(faults).toContain("restart");
    // Grants after a restart carry fences above every one before it: the counter row survived.
    const fences = r.history.filter((e) => e.f === "acquire" && e.type === "ok").map((e) => (e.value as { fence: number }).fence);
    expect(fences.length).toBeGreaterThan(3);
    expect(new Set(fences).size).toBe(fences.length);
    expect(await noSurvivors(r.store)).toEqual([]);
  });

  it("postgres-advisory under pause: valid with fencing, each grant's fence one above the last", async () => {
    const r = await jepsenRun([...quick, "--client", "postgres-advisory", "--nemesis", "pause", "--time-limit", "4", "--fence", "on"], "fc-pg-");
    expect(r.exit, r.output).toBe(0);
    const grants = r.history.filter((e) => e.f === "acquire" && e.type === "ok");
    const fences = grants.map((e) => (e.value as { fence: number }).fence).sort((a, b) => a - b);
    expect(fences.length).toBeGreaterThan(3);
    expect(fences.every((f, i) => i === 0 || f === fences[i - 1] + 1)).toBe(true);
    expect(await noSurvivors(r.store)).toEqual([]);
  });

  it("--resource postgres on a redis run: the database decides, the unchanged checker judges its log, nothing left", async () => {
    const r = await jepsenRun(["--concurrency", "4", "--ttl", "400", "--work", "5", "--rate", "20", "--acquire-timeout", "500", "--nemesis", "pause", "--nemesis-interval", "0.6", "--time-limit", "4", "--grace", "2", "--resource", "postgres"], "fc-pg-");
    expect(r.exit, r.output).toBe(0);
    expect(r.results?.valid).toBe(true);
    const decisions = readFileSync(join(latestRun(r.store), "resource.ndjson"), "utf8").split("\n").filter(Boolean);
    expect(decisions.length).toBeGreaterThan(5);
    expect(readFileSync(join(latestRun(r.store), "logs", "resource-db.log"), "utf8")).toContain("ready to accept connections");
    expect(await noSurvivors(r.store)).toEqual([]);
  });

  it("a SIGKILLed runner leaves no Postgres process (the reaper kills the postmaster, its backends follow)", async () => {
    const store = tempRunDir("fc-pg-");
    chmodSync(store, 0o755);
    const run = runCli("test", [...quick, "--client", "postgres-advisory", "--nemesis", "pause-server", "--time-limit", "60", "--store", store]);
    const history = () => join(latestRun(store), "history.ndjson");
    // Killed while the server and its backends are frozen: the hardest moment.
    expect(await waitFor(() => existsSync(history()) && readFileSync(history(), "utf8").includes("start-pause"), 30_000), run.stderr()).toBe(true);
    expect(processesMentioning(store).some((p) => p.includes("postgres"))).toBe(true);
    process.kill(-run.child.pid!, "SIGKILL");
    await run.exit;
    expect(await noSurvivors(store)).toEqual([]);
  });
});
