// P1: session advisory locks through pgbouncer in transaction pooling. The
// witness names client 0's hold and a hold granted while it still held; without
// the pooler the same clients wait their turn.
import { describe, it, expect } from "vitest";
import { scenario, completion } from "../../../test/scenarios/run.ts";

describe("P1: a session advisory lock through pgbouncer", () => {
  it("client 1 is granted the lock client 0 holds (the pooled session already holds it): mutex-violation", async () => {
    const r = await scenario("P1");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types).toEqual(["mutex-violation"]);
    const a = completion(r, 0, "acquire");
    const b = completion(r, 1, "acquire");
    expect(a.type).toBe("ok");
    // Granted while client 0 had not yet asked to release.
    expect(b.time).toBeLessThan(r.of(0, "release")[0].time);
    const [w] = r.results.anomalies["mutex-violation"];
    expect(w.events).toEqual(expect.arrayContaining([a.index, b.index]));
  });

  it("without the pooler (--pg-pooler none) client 1 waits for client 0's release: valid", async () => {
    const r = await scenario("P1", "--pg-pooler", "none");
    expect(r.code, r.out).toBe(0);
    const b = completion(r, 1, "acquire");
    expect(b.type).toBe("ok");
    expect(b.time).toBeGreaterThan(r.of(0, "release")[0].time);
  });
});
