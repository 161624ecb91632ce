// Reports of lock libraries' users, reproduced through the reference adapter
// programs: L2 (redis-py #4279, reacquire() of a Lock made with timeout=0 deletes
// its key) and E1 (python-etcd3 #599, the with-block enters without the lock).
// Each library does it alone: no fault is injected.
import { describe, it, expect } from "vitest";
import { scenario } from "./run.ts";

describe("L2: redis-py's reacquire() with timeout=0", () => {
  it("--client redis-py-timeout-0: client 0's first reacquire deletes its key, client 1 is granted it: mutex-violation between the two holds", async () => {
    const r = await scenario("L2");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types).toContain("mutex-violation");
    const [acquire0] = r.of(0, "acquire", "ok");
    const [acquire1] = r.of(1, "acquire", "ok");
    // The renew that deleted the key said ok, before client 1 was granted.
    const renewed = r.of(0, "renew", "ok").filter((e) => e.time < acquire1.time);
    expect(renewed.length).toBeGreaterThan(0);
    const [w] = r.results.anomalies["mutex-violation"];
    expect(w.events).toEqual(expect.arrayContaining([acquire0.index, acquire1.index]));
    expect(r.out).toMatch(/Scenario L2: found .*mutex-violation.*, as the catalogue predicts/);
  });

  it("--client redis-py: extend() keeps the key, client 1 waits for the release, and the run is valid", async () => {
    const r = await scenario("L2", "--client", "redis-py");
    expect(r.code, r.out).toBe(0);
    const [release0] = r.of(0, "release", "ok");
    const [acquire1] = r.of(1, "acquire", "ok");
    expect(acquire1.time).toBeGreaterThan(release0.time);
  });
});

describe("E1: python-etcd3's with-block", () => {
  it("--client python-etcd3-with: client 1's acquire() fails after 10 s and its body runs anyway beside client 0: mutex-violation", async () => {
    const r = await scenario("E1");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types).toEqual(["mutex-violation"]);
    const [acquire1] = r.of(1, "acquire", "ok");
    expect(acquire1.value).toMatchObject({ library_acquired: false });
    expect(r.out).toMatch(/Scenario E1: found mutex-violation, as the catalogue predicts/);
  });
});
