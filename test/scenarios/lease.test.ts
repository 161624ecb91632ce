// K1 and K2 as the catalogue has them: a holder outlives its lease (frozen, or its
// write slowed on the way), and its late write lands after the next holder's:
// accepted without fencing (stale-write-accepted), refused with it (valid).
import { describe, it, expect } from "vitest";
import { scenario, completion } from "./run.ts";

describe("K1: a holder pauses past its lease", () => {
  it("without fencing, client 0's late write is accepted after client 1's: stale-write-accepted, with that write in the witness", async () => {
    const r = await scenario("K1");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types).toEqual(["stale-write-accepted"]);
    const [b] = r.writesOf(1);
    const [a] = r.writesOf(0);
    expect(b).toMatchObject({ fence: 2, accepted: true });
    expect(a).toMatchObject({ fence: 1, accepted: true });
    expect(a.seq).toBeGreaterThan(b.seq);
    expect(r.results.anomalies["stale-write-accepted"][0].seqs).toEqual(expect.arrayContaining([a.seq, b.seq]));
    expect(r.out).toMatch(/Scenario K1: found stale-write-accepted, as the catalogue predicts/);
  });

  it("with fencing, the resource refuses it and the run is valid", async () => {
    const r = await scenario("K1", "--fence", "on");
    expect(r.code, r.out).toBe(0);
    expect(r.writesOf(0)).toMatchObject([{ fence: 1, accepted: false }]);
    expect(completion(r, 0, "write")).toMatchObject({ type: "fail", error: "stale-fence" });
    expect(r.out).toMatch(/Scenario K1: found valid, as the catalogue predicts/);
  });
});

describe("K2: a holder's write is delayed in the network past its lease", () => {
  it("the scripted latency on worker-1->resource holds client 0's write until after client 1's: stale-write-accepted", async () => {
    const r = await scenario("K2");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types).toEqual(["stale-write-accepted"]);
    const [start] = r.nemesis("start-latency");
    expect(start.value).toEqual({ latency_ms: 1500, jitter_ms: 0, targets: ["worker-1->resource"], duration_ms: 3800 });
    expect(r.nemesis("stop-latency")).toHaveLength(1);
    // Client 0 sent its write first; the resource took it last.
    const sent = (p: number) => r.of(p, "write", "invoke")[0].time;
    expect(sent(0)).toBeLessThan(sent(1));
    const [a] = r.writesOf(0);
    const [b] = r.writesOf(1);
    expect(a.seq).toBeGreaterThan(b.seq);
    expect(r.results.anomalies["stale-write-accepted"][0].seqs).toEqual(expect.arrayContaining([a.seq, b.seq]));
  });

  it("with fencing, the delayed write is refused and the run is valid", async () => {
    const r = await scenario("K2", "--fence", "on");
    expect(r.code, r.out).toBe(0);
    expect(completion(r, 0, "write")).toMatchObject({ type: "fail", error: "stale-fence" });
  });
});
