// Whole runs against the run's own MariaDB: the lease row under pauses shows the
// stale write without fencing and keeps it out with fencing (fixed seeds); a
// named lock under a killed and restarted server and frozen clients is valid
// fenced; and nothing of the server outlives the run, even when the runner is
// SIGKILLed. The runs go at once (each mostly waits out its time limit).
import { describe, it, expect } from "vitest";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { jepsenRun, latestRun, processesMentioning, runCli, tempRunDir, waitFor, survivors, grantsIn } from "../../../test/helpers.ts";

const quick = ["--backend", "mariadb", "--concurrency", "4", "--workers", "2", "--ttl", "400", "--work", "100", "--rate", "20", "--acquire-timeout", "500", "--nemesis-interval", "0.6", "--grace", "2", "--time-limit", "4"];

describe.concurrent("mariadb runs", () => {
  it("mariadb-lease under pauses without fencing: INVALID, a frozen holder's write accepted after the next holder's", async () => {
    const r = await jepsenRun([...quick, "--client", "mariadb-lease", "--nemesis", "pause", "--fence", "off", "--seed", "1"], "fc-mariadb-");
    expect(r.exit, r.output).toBe(1);
    expect(r.output).toMatch(/^INVALID /m);
    expect(r.results?.anomaly_types).toContain("stale-write-accepted");
    expect(await survivors(r.store)).toEqual([]);
  });

  it("mariadb-lease under pauses with fencing: VALID, the stale writes refused", async () => {
    const r = await jepsenRun([...quick, "--client", "mariadb-lease", "--nemesis", "pause", "--fence", "on", "--seed", "2"], "fc-mariadb-");
    expect(r.exit, r.output).toBe(0);
    expect(r.output).toMatch(/^VALID /m);
    expect((r.results as { stats?: { stale_writes_refused: number } } | null)?.stats?.stale_writes_refused).toBeGreaterThanOrEqual(1);
    expect(await survivors(r.store)).toEqual([]);
  });

  it("mariadb-get-lock under kill and pause: valid with fencing, the server restarted on its data, fences unique", async () => {
    const r = await jepsenRun([...quick, "--client", "mariadb-get-lock", "--nemesis", "kill,pause", "--fence", "on", "--seed", "3"], "fc-mariadb-");
    expect(r.exit, r.output).toBe(0);
    const faults = r.history.filter((e) => e.process === "nemesis").map((e) => e.f);
    expect(faults).toContain("kill");
    expect(faults).toContain("restart");
    const fences = grantsIn(r.history).map((e) => (e.value as { fence: number }).fence);
    expect(fences.length).toBeGreaterThan(3);
    expect(new Set(fences).size).toBe(fences.length);
    expect(await survivors(r.store)).toEqual([]);
  });

  it("a SIGKILLed runner leaves no mariadbd (the reaper kills it, frozen or not)", async () => {
    const store = tempRunDir("fc-mariadb-");
    chmodSync(store, 0o755);
    const run = runCli("test", [...quick.slice(0, -2), "--client", "mariadb-get-lock", "--nemesis", "pause-server", "--time-limit", "60", "--store", store]);
    const history = () => join(latestRun(store), "history.ndjson");
    // Killed while the server is frozen: the hardest moment.
    expect(await waitFor(() => existsSync(history()) && readFileSync(history(), "utf8").includes("start-pause"), 30_000), run.stderr()).toBe(true);
    expect(processesMentioning(store).some((p) => p.includes("mariadbd"))).toBe(true);
    process.kill(-run.child.pid!, "SIGKILL");
    await run.exit;
    expect(await survivors(store)).toEqual([]);
  });
});
