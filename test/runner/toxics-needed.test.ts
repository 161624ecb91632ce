// Which of a backend's own toxics (block_from, zk_sid_only) a run asks a
// Toxiproxy for before it starts: those its members are cut apart with, and only
// when a nemesis of the run cuts members through the proxy. The same fact
// (serverOptions.memberPartitions) decides whether the backend's start puts them
// on its peer proxies, so what preflight asks for is what the run will add.
import { describe, expect, it } from "vitest";
import { parseArgs } from "../../lib/index.ts";
import { TEST_OPTIONS, buildTest } from "../../runner/options.ts";
import { toxicsNeeded } from "../../runner/preflight.ts";

const needed = (argv: string[]): string[] => {
  const test = buildTest(parseArgs(argv, TEST_OPTIONS).options);
  return toxicsNeeded(test).map(([type]) => type);
};

describe("the toxics a run needs of a Toxiproxy", () => {
  it.each([
    [["--backend", "etcd", "--nemesis", "partition"], ["block_from"]],
    [["--backend", "etcd", "--nemesis", "latency,partition"], ["block_from"]],
    [["--backend", "etcd", "--nemesis", "partition", "--partition-mode", "reset"], ["block_from"]],
    [["--backend", "zookeeper", "--nemesis", "partition"], ["zk_sid_only"]],
    // Nothing cuts members apart: their peer proxies only carry bytes.
    [["--backend", "etcd"], []],
    [["--backend", "etcd", "--nemesis", "latency"], []],
    [["--backend", "etcd", "--nemesis", "pause,pause-server,kill"], []],
    [["--backend", "etcd", "--nemesis", "none"], []],
    [["--backend", "zookeeper", "--nemesis", "latency"], []],
    [["--backend", "zookeeper", "--nemesis", "kill"], []],
    // Members cut off their container network, not through the proxy.
    [["--backend", "etcd", "--nemesis", "partition", "--partition-mode", "network", "--deploy", "docker"], []],
    // A backend whose servers do not talk to each other needs none.
    [["--backend", "redis", "--nemesis", "partition"], []],
  ])("%j: %j", (argv, toxics) => {
    expect(needed(argv)).toEqual(toxics);
  });

  it("follows the nemeses' own declaration (cutsMembers), not a list of names here", async () => {
    const { NEMESES } = await import("../../nemesis/index.ts");
    const cutting = Object.entries(NEMESES).filter(([, n]) => "cutsMembers" in n && n.cutsMembers).map(([name]) => name);
    expect(cutting).toEqual(["partition"]);
    // ZooKeeper takes every nemesis but the clock, which cannot move its JVM's monotonic clock.
    for (const name of Object.keys(NEMESES).filter((n) => n !== "clock"))
      expect([name, needed(["--backend", "zookeeper", "--nemesis", name])]).toEqual([name, cutting.includes(name) ? ["zk_sid_only"] : []]);
  });
});
