// Grudges are pure: which worker-to-server links a partition cuts.
import { describe, it, expect } from "vitest";
import { grudge, serverCuts, GRUDGES } from "../../nemesis/grudges.ts";
import { rng } from "../../lib/index.ts";

const workers = ["worker-1", "worker-2", "worker-3"];
const five = ["redis-1", "redis-2", "redis-3", "redis-4", "redis-5"];
const reach = (cut: Array<[string, string]>, w: string, servers: string[]) => servers.filter((s) => !cut.some(([cw, cs]) => cw === w && cs === s));

describe("grudges", () => {
  it("isolate-one cuts one server from every worker and nothing else", () => {
    for (let seed = 0; seed < 20; seed++) {
      const g = grudge("isolate-one", rng(seed), workers, five);
      const servers = new Set(g.cut.map(([, s]) => s));
      expect(servers.size).toBe(1);
      expect(g.cut).toHaveLength(workers.length);
    }
  });

  it("majority-minority leaves some workers with a majority and others with at most a minority", () => {
    for (let seed = 0; seed < 20; seed++) {
      const g = grudge("majority-minority", rng(seed), workers, five);
      const sizes = workers.map((w) => reach(g.cut, w, five).length).sort();
      expect(sizes[sizes.length - 1]).toBe(3);
      expect(sizes[0]).toBe(2);
    }
  });

  it("majority-minority with one server cuts some but not all workers off", () => {
    for (let seed = 0; seed < 20; seed++) {
      const g = grudge("majority-minority", rng(seed), workers, ["redis-1"]);
      expect(g.cut.length).toBeGreaterThan(0);
      expect(g.cut.length).toBeLessThan(workers.length);
    }
  });

  it("bridge: every worker reaches the bridge, and the two sides share nothing else", () => {
    for (let seed = 0; seed < 20; seed++) {
      const g = grudge("bridge", rng(seed), workers, five);
      const [a, b] = g.components;
      const shared = a.filter((x) => b.includes(x));
      expect(shared).toHaveLength(1);
      for (const w of workers) expect(reach(g.cut, w, five)).toContain(shared[0]);
    }
  });

  it("random-halves splits everyone into two components, and each cut crosses them", () => {
    for (let seed = 0; seed < 20; seed++) {
      const g = grudge("random-halves", rng(seed), workers, five);
      const [a, b] = g.components;
      expect(a.length + b.length).toBe(workers.length + five.length);
      for (const [w, s] of g.cut) expect(a.includes(w) !== a.includes(s)).toBe(true);
    }
  });

  it("isolate-leader isolates the leader it is given, and without one behaves as isolate-one", () => {
    for (let seed = 0; seed < 20; seed++) {
      const g = grudge("isolate-leader", rng(seed), workers, five, "redis-4");
      expect(g.components[0]).toEqual(["redis-4"]);
      expect(g.cut).toEqual(workers.map((w) => [w, "redis-4"]));
      expect(grudge("isolate-leader", rng(seed), workers, five).components).toEqual(grudge("isolate-one", rng(seed), workers, five).components);
    }
  });

  it("serverCuts: the pairs of servers that share no component; a bridge is cut from no one", () => {
    const three = ["etcd-1", "etcd-2", "etcd-3"];
    expect(serverCuts([["etcd-1"], ["worker-1", "etcd-2", "etcd-3"]], three)).toEqual([["etcd-1", "etcd-2"], ["etcd-1", "etcd-3"]]);
    expect(serverCuts([["worker-1", "etcd-1", "etcd-2"], ["worker-2", "etcd-2", "etcd-3"]], three)).toEqual([["etcd-1", "etcd-3"]]);
    expect(serverCuts([[...workers, ...three]], three)).toEqual([]);
    for (let seed = 0; seed < 20; seed++) {
      const g = grudge("bridge", rng(seed), workers, three);
      const [a, b] = g.components;
      const bridge = a.find((x) => b.includes(x))!;
      expect(serverCuts(g.components, three).flat()).not.toContain(bridge);
    }
  });

  it("the same seed gives the same grudge", () => {
    for (const kind of GRUDGES) expect(grudge(kind, rng(9), workers, five)).toEqual(grudge(kind, rng(9), workers, five));
  });
});
