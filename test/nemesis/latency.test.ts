// Which workers the latency nemesis slows is pure: a random proper subset, with a
// holder's worker in it whenever the run says some worker holds the lock.
import { describe, it, expect } from "vitest";
import { slowWorkers } from "../../nemesis/latency.ts";
import { parseArgs, rng } from "../../lib/index.ts";
import { buildTest, TEST_OPTIONS } from "../../runner/options.ts";

const three = ["worker-1", "worker-2", "worker-3"];

describe("latency nemesis: which workers it slows", () => {
  it("always slows a holder's worker when there is one", () => {
    for (let seed = 0; seed < 200; seed++) {
      expect(slowWorkers(rng(seed), three, ["worker-3"])).toContain("worker-3");
      const slow = slowWorkers(rng(seed), three, ["worker-1", "worker-2"]);
      expect(slow.includes("worker-1") || slow.includes("worker-2")).toBe(true);
    }
  });

  it("with no holder, any worker may be slowed (the choice is not fixed)", () => {
    const seen = new Set<string>();
    for (let seed = 0; seed < 200; seed++) for (const w of slowWorkers(rng(seed), three, [])) seen.add(w);
    expect([...seen].sort()).toEqual(three);
  });

  it("leaves at least one worker fast, slows at least one, and names each at most once", () => {
    for (let seed = 0; seed < 200; seed++)
      for (const holders of [[], ["worker-2"], three]) {
        const slow = slowWorkers(rng(seed), three, holders);
        expect(slow.length).toBeGreaterThanOrEqual(1);
        expect(slow.length).toBeLessThan(three.length);
        expect(new Set(slow).size).toBe(slow.length);
      }
    expect(slowWorkers(rng(1), ["worker-1", "worker-2"], ["worker-1"])).toEqual(["worker-1"]);
    expect(slowWorkers(rng(1), ["worker-1"], [])).toEqual(["worker-1"]);
  });

  it("by default adds more than the TTL each way, jitter included, yet a slow round trip fits the command timeout", () => {
    for (const ttl of [300, 500, 1000, 3000]) {
      const t = buildTest(parseArgs(["--ttl", String(ttl)], TEST_OPTIONS).options);
      const { latencyMs, jitterMs } = t.nemesisOptions;
      // A holder's write sent into the slow link lands after its lease and after the next holder's write...
      expect(latencyMs - jitterMs).toBeGreaterThan(ttl);
      // ...and the slowest round trip still completes, so the run records outcomes rather than timeouts.
      expect(2 * (latencyMs + jitterMs)).toBeLessThan(t.commandTimeoutMs);
    }
  });
});
