// Which of a backend's own toxics (block_from, zk_sid_only) a run asks a
// Toxiproxy for before it starts: those its members are cut apart with, and only
// when a nemesis of the run cuts members through the proxy. The same fact
// (serverOptions.memberPartitions) decides whether the backend's start puts them
// on its peer proxies, so what preflight asks for is what the run will add.
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "../../lib/index.ts";
import { NEMESES } from "../../nemesis/index.ts";
import { TEST_OPTIONS, buildTest } from "../../runner/options.ts";
import { toxicsNeeded } from "../../runner/option-rules.ts";
import { tempDir } from "../helpers.ts";

/** An --endpoints file of an etcd cluster of the user's. */
const etcdOfTheirs = (): string => {
  const file = join(tempDir("fc-toxics-needed-"), "endpoints.json");
  writeFileSync(file, JSON.stringify({ servers: [1, 2, 3].map((i) => ({ name: `etcd-${i}`, host: "127.0.0.1", port: 42378 + i })) }));
  return file;
};

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
    // A cluster of the user's: its members talk to each other directly, not through a proxy of ours.
    [["--backend", "etcd", "--deploy", "external", "--endpoints", etcdOfTheirs(), "--nemesis", "partition"], []],
  ])("%j: %j", (argv, toxics) => {
    expect(needed(argv)).toEqual(toxics);
  });

  it("follows the nemeses' own declaration (cutsMembers), not a list of names", () => {
    const latency = NEMESES.latency as { cutsMembers?: true };
    expect(needed(["--backend", "zookeeper", "--nemesis", "latency"])).toEqual([]);
    // A nemesis that declared it cuts members would need the toxic too, by that declaration alone.
    latency.cutsMembers = true;
    try {
      expect(needed(["--backend", "zookeeper", "--nemesis", "latency"])).toEqual(["zk_sid_only"]);
    } finally {
      delete latency.cutsMembers;
    }
  });
});
