// ZooKeeper and Postgres with --deploy docker on a real engine: a ZooKeeper
// leader cut off the run's network and a new one elected (seen in the members'
// own logs), the old one back as a follower after the heal; Postgres with
// pgbouncer as a second container (the P1 pitfall, found in containers as
// locally), and a Postgres container frozen and killed under a fenced run.
// Each leaves nothing in the engine.
import { describe, it, expect } from "vitest";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { tempRunDir, runCli } from "../helpers.ts";
import { engineOrSkip, fencecheckObjects, loadRun, SHORT_RUN } from "./engine.ts";

const engine = await engineOrSkip("test/docker/zookeeper-postgres.test.ts");
// Spelled out: test/runner/deployments.test.ts looks for the words in each file that runs a backend in docker mode.
const short = ["--deploy", "docker", ...SHORT_RUN];
const load = loadRun;

/** The moments a member's log says it started leading or following, and lost its leader. */
function roles(log: string): Array<{ at: string; role: "LEADING" | "FOLLOWING" | "LOOKING" }> {
  return [...log.matchAll(/^(\S+ \S+) .* - (LEADING|FOLLOWING)$|^(\S+ \S+) .*PeerState set to (LOOKING)/gm)].map((m) => ({
    at: m[1] ?? m[3],
    role: (m[2] ?? m[4]) as "LEADING" | "FOLLOWING" | "LOOKING",
  }));
}

describe.skipIf(!engine)("--deploy docker: ZooKeeper and Postgres", () => {
  it("ZooKeeper with --partition-mode network: the leader cut off, a new one elected, the old one following after the heal", async () => {
    const store = tempRunDir("fc-docker-zk-");
    const cli = runCli("test", [
      ...short,
      "--backend", "zookeeper",
      "--nemesis", "partition", "--partition", "isolate-leader", "--partition-mode", "network",
      "--nemesis-interval", "1", "--fault-min", "3000", "--fault-max", "3500",
      "--fence", "on", "--time-limit", "8", "--store", store,
    ]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const { dir, events, run } = load(store);
    expect(Object.keys(run.deployment.containers).sort()).toEqual(["zk-1", "zk-2", "zk-3"]);
    const cut = events.find((e) => e.f === "start-partition");
    expect(cut?.value).toMatchObject({ grudge: "isolate-leader", mode: "network" });
    const isolated = (cut!.value as { components: string[][] }).components.find((c) => c.length === 1 && c[0].startsWith("zk-"))![0];
    const logs = Object.fromEntries(["zk-1", "zk-2", "zk-3"].map((m) => [m, roles(readFileSync(join(dir, "logs", `${m}.log`), "utf8"))]));
    // The isolated member led before the cut.
    const first = logs[isolated].find((r) => r.role !== "LOOKING");
    expect(first?.role, `${isolated}: ${JSON.stringify(logs[isolated])}`).toBe("LEADING");
    // Another member then took over...
    const others = ["zk-1", "zk-2", "zk-3"].filter((m) => m !== isolated);
    expect(others.some((m) => logs[m].some((r) => r.role === "LEADING")), JSON.stringify(logs)).toBe(true);
    // ... and the old leader, after losing its followers, followed a leader again once healed.
    const lost = logs[isolated].findIndex((r) => r.role === "LOOKING");
    expect(lost).toBeGreaterThan(0);
    expect(logs[isolated].slice(lost).some((r) => r.role === "FOLLOWING"), JSON.stringify(logs[isolated])).toBe(true);
    expect(await fencecheckObjects(engine!, dir)).toEqual({ containers: [], running: [], networks: [] });
  });

  it("Postgres behind pgbouncer, a second container: session advisory locks in transaction pooling are held twice (P1)", async () => {
    const store = tempRunDir("fc-docker-pg-");
    const cli = runCli("test", [...short, "--backend", "postgres", "--client", "postgres-advisory", "--pg-pooler", "pgbouncer", "--nemesis", "none", "--fence", "on", "--time-limit", "2", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(1);
    const { dir, run, results } = load(store);
    expect(Object.keys(run.deployment.containers).sort()).toEqual(["pgbouncer-1", "postgres-1"]);
    expect(results.valid).toBe(false);
    expect(results.anomaly_types).toEqual(["mutex-violation"]);
    expect(readFileSync(join(dir, "logs", "postgres-1.log"), "utf8")).toMatch(/database system is ready to accept connections/);
    expect(await fencecheckObjects(engine!, dir)).toEqual({ containers: [], running: [], networks: [] });
  });

  it("a Postgres container paused and killed under a fenced run: valid, the faults in the history (that the pause holds its backends too is not asserted here)", async () => {
    const store = tempRunDir("fc-docker-pg-");
    const cli = runCli("test", [...short, "--backend", "postgres", "--nemesis", "pause-server,kill", "--nemesis-interval", "1", "--fence", "on", "--time-limit", "5", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const { dir, events, results } = load(store);
    expect(results.valid).toBe(true);
    expect(events.some((e) => e.f === "start-pause" && (e.value as { targets: string[] }).targets[0] === "postgres-1")).toBe(true);
    expect(events.some((e) => e.f === "kill")).toBe(true);
    expect(events.some((e) => e.f === "restart")).toBe(true);
    expect(await fencecheckObjects(engine!, dir)).toEqual({ containers: [], running: [], networks: [] });
  });
});
