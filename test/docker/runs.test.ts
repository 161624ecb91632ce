// test:jepsen with --deploy docker on a real engine, as a user runs it: the same
// history events as locally, nothing left in the engine afterwards, a runner
// killed outright leaves no container running and the next run (or npm run reap)
// removes what it left; and the options that need containers are refused without.
import { describe, it, expect } from "vitest";
import { join } from "node:path";
import { mkdirSync, readFileSync, readdirSync, realpathSync } from "node:fs";
import { Redis } from "ioredis";
import { ProcessGroup } from "../../cluster/processes.ts";
import { PortPlan } from "../../cluster/ports.ts";
import { startRedisNodes } from "../../backends/redis/server.ts";
import { dockerDeployment } from "../../docker/index.ts";
import { tempRunDir, runCli, latestRun, waitFor } from "../helpers.ts";
import { engineOrSkip, fencecheckObjects, loadRun, SHORT_RUN } from "./engine.ts";

const engine = await engineOrSkip("test/docker/runs.test.ts");
// Spelled out: test/runner/deployments.test.ts looks for the words in each file that runs a backend in docker mode.
const short = ["--deploy", "docker", ...SHORT_RUN];
const load = loadRun;

describe.skipIf(!engine)("--deploy docker", () => {
  // With AOF: without it a killed Redis forgets its fence counter and hands out
  // fences again (duplicate-fence), in a container as locally.
  it("redis in a container under pause-server and kill: fenced and valid, the faults in the history, nothing left", async () => {
    const store = tempRunDir("fc-docker-");
    const cli = runCli("test", [...short, "--backend", "redis", "--nemesis", "pause-server,kill", "--fence", "on", "--redis-persistence", "always", "--nemesis-interval", "1", "--time-limit", "8", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const { dir, events, run } = load(store);
    expect(run.deployment).toMatchObject({ engine: expect.stringMatching(/^unix:|^tcp:/), pause_mode: "signal" });
    expect(Object.keys(run.deployment.containers)).toEqual(["redis-1"]);
    expect(events.some((e) => e.f === "start-pause" && (e.value as { targets: string[] }).targets[0] === "redis-1")).toBe(true);
    expect(events.some((e) => e.f === "kill")).toBe(true);
    expect(events.some((e) => e.f === "restart")).toBe(true);
    expect(readFileSync(join(dir, "logs", "redis-1.log"), "utf8")).toMatch(/Ready to accept connections/);
    expect(await fencecheckObjects(engine!, dir)).toEqual({ containers: [], running: [], networks: [] });
  });

  it("etcd with --partition-mode network: a member cut off the run's network loses its leader, and the cluster heals", async () => {
    const store = tempRunDir("fc-docker-");
    const cli = runCli("test", [...short, "--backend", "etcd", "--nemesis", "partition", "--partition", "majority-minority", "--partition-mode", "network", "--nemesis-interval", "1", "--fault-min", "2000", "--fault-max", "2500", "--time-limit", "8", "--store", store]);
    expect([0, 1], cli.stdout() + cli.stderr()).toContain(await cli.exit);
    const { dir, events, results } = load(store);
    const cuts = events.filter((e) => e.f === "start-partition");
    expect(cuts.length).toBeGreaterThan(0);
    expect(cuts[0].value).toMatchObject({ mode: "network", member_cuts: expect.any(Array) });
    expect(results.valid).not.toBe("unknown");
    const logs = readdirSync(join(dir, "logs")).filter((f) => /^etcd-\d\.log$/.test(f));
    expect(logs).toHaveLength(3);
    const lost = logs.filter((f) => /lost leader|became pre-candidate|is starting a new election/.test(readFileSync(join(dir, "logs", f), "utf8")));
    expect(lost.length).toBeGreaterThan(0);
    expect(await fencecheckObjects(engine!, dir)).toEqual({ containers: [], running: [], networks: [] });
  });

  it("a runner killed outright leaves no container running, and the next run removes what it left", async () => {
    const store = tempRunDir("fc-docker-");
    const cli = runCli("test", [...short, "--backend", "redlock", "--nemesis", "none", "--time-limit", "30", "--store", store]);
    // Up: five containers running.
    let dir = "";
    expect(
      await waitFor(() => {
        try {
          dir = realpathSync(latestRun(store));
          return (JSON.parse(readFileSync(join(dir, "run.json"), "utf8")).workers ?? null) !== null;
        } catch {
          return false;
        }
      }, 90_000, 200),
      cli.stderr(),
    ).toBe(true);
    expect((await fencecheckObjects(engine!, dir)).running).toHaveLength(5);
    process.kill(-cli.child.pid!, "SIGKILL");
    await cli.exit;
    // The runner's reaper kills each container's process: none keeps running.
    expect(await waitForAsync(async () => (await fencecheckObjects(engine!, dir)).running.length === 0, 10_000)).toBe(true);
    const left = await fencecheckObjects(engine!, dir);
    expect(left.containers).toHaveLength(5);
    expect(left.networks).toHaveLength(1);
    const reap = runCli("reap", []);
    expect(await reap.exit).toBe(0);
    // Every docker-mode run removes what dead runs left as it starts: in a busy
    // suite another file's run may have taken them a moment before reap. Either
    // way they are gone, and what reap lists of them is all of them.
    const listed = [...reap.stdout().matchAll(/^ {2}container (\S+)$/gm)].map((m) => m[1]);
    const ours = listed.filter((n) => left.containers.map((c) => c.replace(/^\//, "")).includes(n));
    expect(ours.length === 0 || ours.length === 5, reap.stdout()).toBe(true);
    expect(reap.stdout()).toMatch(/^Removed \d+ container\(s\) and \d+ network\(s\)/);
    expect(await fencecheckObjects(engine!, dir)).toEqual({ containers: [], running: [], networks: [] });
  });
});

describe.skipIf(!engine)("--deploy external against a Redis in a container", () => {
  it("partitions through the fault proxy, and no key of the run is left in it", async () => {
    const dir = tempRunDir("fc-docker-ext-");
    mkdirSync(join(dir, "data"), { recursive: true });
    const group = new ProcessGroup(dir);
    const deployment = await dockerDeployment({ engine: engine!, runDir: dir, group, pauseMode: "signal", log: () => {} });
    group.onStop(() => deployment.stop());
    try {
      const [node] = await startRedisNodes(group, new PortPlan(0), 1, { runDir: dir, deployment });
      const store = tempRunDir("fc-docker-ext-");
      const cli = runCli("test", ["--deploy", "external", "--endpoints", `${node.host}:${node.port}`, "--nemesis", "partition", "--nemesis-interval", "1", "--time-limit", "5", "--seed", "2", "--store", store]);
      expect([0, 1], cli.stdout() + cli.stderr()).toContain(await cli.exit);
      const { run, events } = load(store);
      expect(events.some((e) => e.f === "start-partition")).toBe(true);
      expect(run.keys_removed).toBeGreaterThan(0);
      const r = new Redis({ host: node.host, port: node.port });
      expect(await r.dbsize()).toBe(0);
      r.disconnect();
    } finally {
      await group.stopAll();
    }
  });
});

async function waitForAsync(cond: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return cond();
}

describe("options that need containers", () => {
  for (const [args, message] of [
    [["--pause-mode", "freeze"], /--pause-mode freeze needs --deploy docker/],
    [["--partition-mode", "network", "--backend", "etcd"], /--partition-mode network needs --deploy docker/],
    [["--partition-mode", "network", "--backend", "redis", "--deploy", "docker"], /--backend redis has no member-to-member traffic/],
    [["--deploy", "docker"], /--deploy docker needs a container engine, and none answered: tried unix:\/\/\/nonexistent\/docker.sock/],
  ] as const)
    it(`${args.join(" ")}: exit 254, nothing stored`, async () => {
      const store = tempRunDir("fc-docker-bad-");
      const cli = runCli("test", [...args, "--time-limit", "1", "--store", store], { DOCKER_HOST: "unix:///nonexistent/docker.sock" });
      expect(await cli.exit).toBe(254);
      expect(cli.stderr()).toMatch(message);
      expect(readdirSync(store).filter((f) => f !== "logs")).toEqual([]);
    });
});
