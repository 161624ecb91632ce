// T1, F1 and F2: a release that deletes the next holder's lock, and fences that
// repeat or go backwards. Each witness names the holds the catalogue says.
import { describe, it, expect } from "vitest";
import { scenario, completion } from "./run.ts";

describe("T1: release as GET then DEL", () => {
  it("client 0's late DEL frees client 1's lock and client 2 acquires: mutex-violation between clients 1 and 2", async () => {
    const r = await scenario("T1");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types).toEqual(["mutex-violation"]);
    const b = completion(r, 1, "acquire");
    const c = completion(r, 2, "acquire");
    expect(b.type).toBe("ok");
    expect(c.type).toBe("ok");
    // Client 0 believes it released its own lock: the DEL found a key, client 1's.
    expect(completion(r, 0, "release")).toMatchObject({ type: "ok", value: { released: true } });
    expect(b.time).toBeLessThan(completion(r, 0, "release").time);
    const [w] = r.results.anomalies["mutex-violation"];
    expect(w.events).toEqual(expect.arrayContaining([b.index, c.index]));
    expect(w.events).not.toContain(completion(r, 0, "acquire").index);
  });

  it("compare-and-delete in one Lua script (--client redis) closes it", async () => {
    const r = await scenario("T1", "--client", "redis");
    expect(r.code, r.out).toBe(0);
    expect(r.of(1, "acquire", "ok")).toHaveLength(1);
    expect(r.of(2, "acquire", "ok")).toHaveLength(1);
  });
});

describe("F1: the fence counter restarts", () => {
  it("client 2 gets fence 1 again after 2: duplicate-fence with client 0, fence-regression after client 1, and the resource refuses it", async () => {
    const r = await scenario("F1");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types.sort()).toEqual(["duplicate-fence", "fence-regression"]);
    const fences = [0, 1, 2].map((p) => completion(r, p, "acquire").value?.fence);
    expect(fences).toEqual([1, 2, 1]);
    const [kill] = r.nemesis("kill");
    expect(kill.value).toEqual({ targets: ["redis-1"], restart_delay_ms: 200 });
    expect(r.nemesis("restart")).toHaveLength(1);
    const [a, b, c] = [0, 1, 2].map((p) => completion(r, p, "acquire").index);
    expect(r.results.anomalies["duplicate-fence"][0].events).toEqual(expect.arrayContaining([a, c]));
    expect(r.results.anomalies["fence-regression"][0].events).toEqual(expect.arrayContaining([b, c]));
    // Liveness lost: the resource refuses the new holder.
    expect(completion(r, 2, "write")).toMatchObject({ type: "fail", error: "stale-fence" });
  });

  it("with --redis-persistence always the counter survives the kill: fences 1, 2, 3 and a valid run", async () => {
    const r = await scenario("F1", "--redis-persistence", "always");
    expect(r.code, r.out).toBe(0);
    expect([0, 1, 2].map((p) => completion(r, p, "acquire").value?.fence)).toEqual([1, 2, 3]);
  });
});

describe("F2: Redlock's max-of-INCR fence under partitions", () => {
  it("the fifth hold, on another majority, gets fence 3 after 4: fence-regression and duplicate-fence", async () => {
    const r = await scenario("F2");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types.sort()).toEqual(["duplicate-fence", "fence-regression"]);
    const acquires = [0, 1, 2, 3, 4].map((p) => completion(r, p, "acquire"));
    expect(acquires.map((e) => e.value?.fence)).toEqual([1, 2, 3, 4, 3]);
    expect(acquires.map((e) => e.value?.granted)).toEqual([
      ["redis-1", "redis-2", "redis-3"],
      ["redis-1", "redis-4", "redis-5"],
      ["redis-1", "redis-2", "redis-3"],
      ["redis-1", "redis-4", "redis-5"],
      ["redis-2", "redis-3", "redis-4"],
    ]);
    expect(r.nemesis("start-partition")).toHaveLength(2);
    expect(r.results.anomalies["fence-regression"][0].events).toEqual(expect.arrayContaining([acquires[3].index, acquires[4].index]));
    expect(r.results.anomalies["duplicate-fence"][0].events).toEqual(expect.arrayContaining([acquires[2].index, acquires[4].index]));
  });
});
