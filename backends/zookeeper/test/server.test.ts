// Three real ZooKeeper servers behind the fault proxy: a member cut off from the
// other two loses its quorum (its log says so, and it stops serving) while they go
// on; cutting the leader off makes the other two elect a new one; a heal brings
// everyone back; a killed member comes back on its port and data directory.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import { startZkCluster, type ZkCluster } from "../server.ts";
import { zkMode } from "../admin.ts";
import { startProxyServer, type ProxyServer } from "../../../proxy/index.ts";
import { tempRunDir, processesMentioning, eventually } from "../../../test/helpers.ts";
import { ZOOKEEPER_SERVER } from "../programs.ts";
import { WELL_KNOWN_PORTS } from "../../index.ts";

let dir: string;
let group: ProcessGroup;
let proxy: ProxyServer;
let cluster: ZkCluster;

const port = (name: string): number => cluster.nodes.find((n) => n.name === name)!.port;
const log = (name: string): string => readFileSync(join(dir, "logs", `${name}.log`), "utf8");

beforeAll(async () => {
  dir = tempRunDir("fc-zk-");
  group = new ProcessGroup(dir);
  proxy = await startProxyServer({ port: 0 });
  cluster = await startZkCluster({ group, ports: new PortPlan(0), runDir: dir, toxiproxyUrl: proxy.url });
}, 60_000);

afterAll(async () => {
  await group?.stopAll();
  await proxy?.close();
  expect(processesMentioning(dir)).toEqual([]);
});

describe("a ZooKeeper ensemble of three", () => {
  it("serves with one leader, on ports of its own and no AdminServer", async () => {
    const modes = await Promise.all(cluster.nodes.map((m) => zkMode(m.port)));
    expect(modes.filter((m) => m === "leader")).toHaveLength(1);
    expect(modes.filter((m) => m === "follower")).toHaveLength(2);
    for (const m of cluster.nodes) for (const p of [m.port, m.quorumPort, m.electionPort]) expect(ZOOKEEPER_SERVER.defaultPorts).not.toContain(p);
    expect(await cluster.leader()).toMatch(/^zk-[123]$/);
    // --port-base never hands out ZooKeeper's defaults either.
    const plan = new PortPlan(2180, WELL_KNOWN_PORTS);
    expect([await plan.take(), await plan.take()]).toEqual([2180, 2182]);
  });

  it("a follower cut off from the others loses its quorum; the majority keeps serving", async () => {
    const leader = (await cluster.leader())!;
    const follower = cluster.nodes.map((n) => n.name).find((n) => n !== leader)!;
    const rest = cluster.nodes.map((n) => n.name).filter((n) => n !== follower);
    await cluster.peers.partition([[follower], rest]);
    expect(await eventually(async () => (await zkMode(port(follower))) === null)).toBe(true);
    expect(await zkMode(port(leader))).toBe("leader");
    expect(log(follower)).toMatch(/Exception when following the leader|LOOKING/);
    await cluster.peers.heal();
    expect(await eventually(async () => (await zkMode(port(follower))) === "follower")).toBe(true);
  }, 60_000);

  it("cutting the leader off makes the other two elect a new leader", async () => {
    const old = (await cluster.leader())!;
    const rest = cluster.nodes.map((n) => n.name).filter((n) => n !== old);
    await cluster.peers.partition([[old], rest]);
    const fresh = await eventually(async () => {
      const modes = await Promise.all(rest.map((n) => zkMode(port(n))));
      return modes.includes("leader") ? rest[modes.indexOf("leader")] : null;
    });
    expect(rest).toContain(fresh);
    expect(log(fresh!)).toMatch(/LEADING/);
    // The old leader gave up: too few followers.
    expect(await eventually(async () => (await zkMode(port(old))) === null)).toBe(true);
    await cluster.peers.heal();
    expect(await eventually(async () => (await zkMode(port(old))) === "follower")).toBe(true);
    expect(await cluster.leader()).toBe(fresh);
  }, 60_000);

  it("a killed member restarts on its port and data directory and rejoins", async () => {
    const victim = cluster.nodes[0].name;
    await cluster.kill(victim);
    expect(cluster.running(victim)).toBe(false);
    await cluster.restart(victim);
    expect(await eventually(async () => (await zkMode(port(victim))) !== null)).toBe(true);
  }, 60_000);
});
