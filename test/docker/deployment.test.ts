// Servers in containers on a real engine: what the nemeses ask of a deployment
// (pause by signal and by freezer, kill and restart with the same data, a clock
// moved through the mounted offset file, a member cut off the network), each seen
// from the host through the published loopback port, as the workers see it.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { connect } from "node:net";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ProcessGroup } from "../../cluster/processes.ts";
import { PortPlan } from "../../cluster/ports.ts";
import { startRedisCluster } from "../../backends/redis/servers.ts";
import { dockerDeployment, type DockerDeployment } from "../../docker/index.ts";
import { tempRunDir } from "../helpers.ts";
import { engineOrSkip, fencecheckObjects } from "./engine.ts";
import type { Cluster } from "../../cluster/cluster.ts";

const engine = await engineOrSkip("test/docker/deployment.test.ts");

/** One Redis command over a raw socket; null when nothing answers within `ms`. */
function redis(port: number, command: string, ms = 800): Promise<string | null> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port });
    let got = "";
    const done = (v: string | null) => {
      s.destroy();
      resolve(v);
    };
    s.setTimeout(ms, () => done(null));
    s.once("error", () => done(null));
    s.once("connect", () => s.write(command + "\r\n"));
    s.on("data", (d) => {
      got += d.toString();
      if (got.endsWith("\r\n")) done(got.trim());
    });
  });
}

describe.skipIf(!engine)("redis in containers", () => {
  let dir: string;
  let group: ProcessGroup;
  let deployment: DockerDeployment;
  let cluster: Cluster;

  const start = async (pauseMode: "signal" | "freeze") => {
    dir = tempRunDir("fencecheck-docker-");
    mkdirSync(join(dir, "data"), { recursive: true });
    group = new ProcessGroup(dir);
    deployment = await dockerDeployment({ engine: engine!, runDir: dir, group, pauseMode, log: () => {} });
    group.onStop(() => deployment.stop());
    cluster = await startRedisCluster(group, new PortPlan(0), 1, { runDir: dir, persistence: "always", skewableClock: true, deployment });
  };

  afterAll(async () => {
    await group?.stopAll();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  beforeAll(() => start("signal"));

  it("publishes the server's port on 127.0.0.1 only, and answers there", async () => {
    const [node] = cluster.nodes;
    expect(await redis(node.port, "PING")).toBe("+PONG");
    const about = deployment.describe() as { containers: Record<string, { id: string }> };
    const inspected = await engine!.docker.getContainer(about.containers["redis-1"].id).inspect();
    const bindings = Object.values(inspected.HostConfig.PortBindings ?? {}).flat() as Array<{ HostIp: string; HostPort: string }>;
    expect(bindings).toEqual([{ HostIp: "127.0.0.1", HostPort: String(node.port) }]);
  });

  it("a paused server (SIGSTOP to its process) stops answering until resumed", async () => {
    const [node] = cluster.nodes;
    expect(await cluster.pause("redis-1")).toBe(true);
    expect(await redis(node.port, "PING", 500)).toBeNull();
    expect(await cluster.resume("redis-1")).toBe(true);
    expect(await redis(node.port, "PING")).toBe("+PONG");
  });

  it("kill stops it, restart brings back the same data (AOF on the mounted data directory)", async () => {
    const [node] = cluster.nodes;
    expect(await redis(node.port, "SET fence 41")).toBe("+OK");
    await cluster.kill!("redis-1");
    expect(cluster.running("redis-1")).toBe(false);
    expect(await redis(node.port, "PING", 500)).toBeNull();
    await cluster.restart!("redis-1");
    expect(cluster.running("redis-1")).toBe(true);
    expect(await redis(node.port, "GET fence")).toBe("$2\r\n41");
  });

  it("the clock nemesis moves the container's wall clock by writing the offset file", async () => {
    const [node] = cluster.nodes;
    const seconds = async () => Number((await redis(node.port, "TIME"))!.split("\r\n")[2]);
    const before = await seconds();
    await cluster.skewClock!("redis-1", 3_600_000);
    const after = await seconds();
    expect(after - before).toBeGreaterThanOrEqual(3599);
    expect(after - before).toBeLessThan(3610);
    await cluster.skewClock!("redis-1", 0);
    expect(Math.abs((await seconds()) - Math.floor(Date.now() / 1000))).toBeLessThan(3);
  });

  it("teardown removes the container and the network", async () => {
    await group.stopAll();
    expect(await fencecheckObjects(engine!, dir)).toEqual({ containers: [], running: [], networks: [] });
  });

  it("--pause-mode freeze holds it with the cgroup freezer (docker pause)", async () => {
    await start("freeze");
    const [node] = cluster.nodes;
    expect(await cluster.pause("redis-1")).toBe(true);
    const about = deployment.describe() as { containers: Record<string, { id: string }> };
    const state = (await engine!.docker.getContainer(about.containers["redis-1"].id).inspect()).State;
    expect(state.Paused).toBe(true);
    expect(await redis(node.port, "PING", 500)).toBeNull();
    expect(await cluster.resume("redis-1")).toBe(true);
    expect(await redis(node.port, "PING")).toBe("+PONG");
  });
});
