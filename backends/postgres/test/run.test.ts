// Whole runs against the run's own Postgres: its faults (a killed server started
// again on its data directory, a frozen server with its backends, frozen
// clients) are recorded, fencing keeps the verdict valid, and nothing of the
// server outlives the run, even when the runner is SIGKILLed.
import { describe, it, expect } from "vitest";
import { chmodSync, existsSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { jepsenRun, latestRun, processesMentioning, runCli, tempRunDir, waitFor, survivors, grantsIn } from "../../../test/helpers.ts";

const quick = ["--backend", "postgres", "--concurrency", "4", "--workers", "2", "--ttl", "400", "--work", "5", "--rate", "20", "--acquire-timeout", "500", "--nemesis-interval", "0.6", "--grace", "2"];

describe("postgres runs", () => {
  it("postgres-lease under kill and pause-server: valid with fencing, the server restarted on its data, nothing left", async () => {
    const r = await jepsenRun([...quick, "--client", "postgres-lease", "--nemesis", "kill,pause-server", "--nemesis-interval", "1", "--time-limit", "6", "--fence", "on"], "fc-pg-");
    expect(r.exit, r.output).toBe(0);
    expect(r.results?.valid).toBe(true);
    // What happened when, for a failure below to explain itself: faults, and grants with their fences.
    const t0 = r.history.find((e) => typeof e.time === "number")?.time as number;
    const at = (e: { time?: unknown }) => (((e.time as number) - t0) / 1e9).toFixed(2);
    const outline = r.history
      .filter((e) => e.process === "nemesis" || (e.f === "acquire" && e.type !== "invoke"))
      .map((e) => `${at(e)} ${e.process === "nemesis" ? e.f : `${e.type} ${e.type === "ok" ? (e.value as { fence: number }).fence : e.error}`}`)
      .join("\n");
    const faults = r.history.filter((e) => e.process === "nemesis");
    expect(faults.map((e) => e.f)).toContain("kill");
    expect(faults.map((e) => e.f), outline).toContain("restart");
    // The counter row survived each kill: every grant after a restart carries a
    // fence above every grant before the kill it followed.
    const grants = grantsIn(r.history).map((e) => ({ time: e.time as number, fence: (e.value as { fence: number }).fence }));
    let spanned = 0;
    faults.forEach((kill, i) => {
      if (kill.f !== "kill") return;
      const restart = faults.slice(i + 1).find((e) => e.f === "restart");
      if (!restart) return;
      const before = grants.filter((g) => g.time < (kill.time as number)).map((g) => g.fence);
      const after = grants.filter((g) => g.time > (restart.time as number)).map((g) => g.fence);
      if (!before.length || !after.length) return;
      spanned++;
      expect(Math.min(...after), outline).toBeGreaterThan(Math.max(...before));
    });
    expect(spanned, `no kill had grants both before it and after its restart:\n${outline}`).toBeGreaterThan(0);
    expect(new Set(grants.map((g) => g.fence)).size).toBe(grants.length);
    expect(await survivors(r.store)).toEqual([]);
  });

  it("postgres-advisory under pause: valid with fencing, each grant's fence one above the last", async () => {
    const r = await jepsenRun([...quick, "--client", "postgres-advisory", "--nemesis", "pause", "--time-limit", "4", "--fence", "on"], "fc-pg-");
    expect(r.exit, r.output).toBe(0);
    const grants = grantsIn(r.history);
    const fences = grants.map((e) => (e.value as { fence: number }).fence).sort((a, b) => a - b);
    expect(fences.length).toBeGreaterThan(3);
    expect(fences.every((f, i) => i === 0 || f === fences[i - 1] + 1)).toBe(true);
    expect(await survivors(r.store)).toEqual([]);
  });

  it.each([
    ["postgres", "ready to accept connections"],
    ["dynamodb", ""],
  ])("--resource %s on a redis run: the database decides, its committed decisions (format 2, each with its place) are judged, nothing left", async (store, ready) => {
    const r = await jepsenRun(["--concurrency", "4", "--ttl", "400", "--work", "5", "--rate", "20", "--acquire-timeout", "500", "--nemesis", "pause", "--nemesis-interval", "0.6", "--time-limit", "4", "--grace", "2", "--resource", store], "fc-pg-");
    expect(r.exit, r.output).toBe(0);
    expect(r.results?.valid).toBe(true);
    const run = latestRun(r.store);
    const decisions = readFileSync(join(run, "resource.ndjson"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(decisions.length).toBeGreaterThan(5);
    // Each key's places are 1, 2, 3, ... in the order the database decided (nothing was lost here).
    for (const key of new Set(decisions.map((d) => d.key))) {
      const places = decisions.filter((d) => d.key === key).map((d) => d.order).sort((a, b) => a - b);
      expect(places).toEqual(places.map((_, i) => i + 1));
    }
    expect(JSON.parse(readFileSync(join(run, "history.ndjson"), "utf8").split("\n")[0]).format).toBe(2);
    expect(existsSync(join(run, "logs", "resource-db.log"))).toBe(true);
    if (ready) expect(readFileSync(join(run, "logs", "resource-db.log"), "utf8")).toContain(ready);
    expect(await survivors(r.store)).toEqual([]);
  });

  it("a store under a directory of mode 0700 (as /root is) the postgres user cannot enter: the run works, the server's files live outside and go with it", async () => {
    const home = tempRunDir("fc-pg-home-");
    const store = join(home, "histories");
    const run = runCli("test", [...quick, "--client", "postgres-lease", "--nemesis", "pause", "--time-limit", "3", "--store", store]);
    // data/postgres-1 is a link while the server runs: to a directory of the run's own it can reach.
    let outside: string | null = null;
    await waitFor(() => {
      try {
        outside = readlinkSync(join(latestRun(store), "data", "postgres-1"));
        return true;
      } catch {
        return false;
      }
    }, 30_000);
    expect(await run.exit, run.stderr()).toBe(0);
    expect(outside).toMatch(/fencecheck-postgres-1-[^/]+\/postgres-1$/);
    expect(JSON.parse(readFileSync(join(latestRun(store), "results.json"), "utf8")).valid).toBe(true);
    expect(readFileSync(join(latestRun(store), "logs", "postgres-1.log"), "utf8")).toContain("ready to accept connections");
    // Gone with the run: the link, its directory, and every process that used it.
    expect(existsSync(join(latestRun(store), "data"))).toBe(false);
    expect(existsSync(dirname(outside!))).toBe(false);
    expect(await survivors(dirname(outside!))).toEqual([]);
  });

  it("under a directory of mode 0750 (a new Ubuntu user's home) as well; --keep-data keeps the outside directory and the link to it", async () => {
    const home = tempRunDir("fc-pg-home-");
    chmodSync(home, 0o750);
    const store = join(home, "histories");
    const r = runCli("test", [...quick, "--client", "postgres-advisory", "--nemesis", "none", "--time-limit", "2", "--keep-data", "--store", store]);
    expect(await r.exit, r.stderr()).toBe(0);
    const link = join(latestRun(store), "data", "postgres-1");
    const outside = readlinkSync(link);
    expect(existsSync(join(outside, "PG_VERSION"))).toBe(true);
    rmSync(dirname(outside), { recursive: true, force: true });
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
    expect(await survivors(store)).toEqual([]);
  });

  it("a SIGKILLed runner whose server's files live outside the store: the reaper removes them after the processes", async () => {
    const home = tempRunDir("fc-pg-home-");
    const store = join(home, "histories");
    const run = runCli("test", [...quick, "--client", "postgres-lease", "--nemesis", "pause", "--time-limit", "60", "--store", store]);
    const history = () => join(latestRun(store), "history.ndjson");
    expect(await waitFor(() => existsSync(history()) && readFileSync(history(), "utf8").includes('"type":"ok"'), 30_000), run.stderr()).toBe(true);
    const outside = dirname(readlinkSync(join(latestRun(store), "data", "postgres-1")));
    expect(existsSync(outside)).toBe(true);
    process.kill(-run.child.pid!, "SIGKILL");
    await run.exit;
    // The reaper kills first and then removes the directory (its `rm` names it until it is done).
    expect(await waitFor(() => !existsSync(outside), 30_000)).toBe(true);
    expect(await survivors(outside)).toEqual([]);
  });
});
