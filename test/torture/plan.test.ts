// The torture's trials are drawn from the seed and the trial's number alone, and
// every one is a run `fencecheck test` takes: a backend in a deployment it runs
// in, a nemesis it can inject there.
import { describe, expect, it } from "vitest";
import { TEST_OPTIONS, buildTest } from "../../runner/index.ts";
import { BACKEND_NAMES } from "../../backends/index.ts";
import { parseArgs } from "../../lib/index.ts";
import { ALL, KILL_WAYS, planTrial, type PlanLimits } from "../../torture/plan.ts";
import { testArgs } from "../../torture/launch.ts";

const trials = (seed: number, n: number, limits: PlanLimits = ALL) => Array.from({ length: n }, (_, i) => planTrial(seed, i + 1, limits));

describe("the torture's plan", () => {
  it("is the same for the same seed and trial, whatever ran before; another seed gives other trials", () => {
    expect(trials(7, 12)).toEqual(trials(7, 12));
    expect(planTrial(7, 9)).toEqual(trials(7, 9)[8]);
    expect(trials(8, 12)).not.toEqual(trials(7, 12));
  });

  it("goes round every kill way and every backend, and mixes docker runs in", () => {
    for (const seed of [1, 2, 3]) {
      const t = trials(seed, 42);
      expect(new Set(t.slice(0, KILL_WAYS.length).map((p) => p.way))).toEqual(new Set(KILL_WAYS));
      expect(new Set(t.slice(0, BACKEND_NAMES.length).map((p) => p.backend))).toEqual(new Set(BACKEND_NAMES));
      const docker = t.filter((p) => p.deploy === "docker").length;
      expect(docker).toBeGreaterThan(0);
      expect(docker).toBeLessThan(t.length / 2);
    }
  });

  it("draws only runs that fencecheck test takes (every backend, deployment and nemesis it may pick)", () => {
    for (const p of trials(11, 300)) {
      expect(() => buildTest(parseArgs(testArgs(p, "/tmp/store"), TEST_OPTIONS).options), JSON.stringify(p)).not.toThrow();
      expect(p.at).toBeGreaterThanOrEqual(0);
      expect(p.at).toBeLessThanOrEqual(1);
      if (p.way === "kill-resource-db") expect(p.moment).toBe("operations");
    }
  });

  it("keeps to the limits it is given", () => {
    const t = trials(5, 20, { backends: ["redis", "lockserver"], deploys: ["docker"], ways: ["ctrl-c"] });
    // lockserver has no container image: docker alone leaves redis.
    expect(new Set(t.map((p) => `${p.backend}/${p.deploy}/${p.way}`))).toEqual(new Set(["redis/docker/ctrl-c"]));
  });
});
