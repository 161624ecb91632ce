// C1 as the catalogue has it: a counter's read-modify-write under a lease with only
// the writes fenced loses an increment; fencing the reads too closes it.
import { describe, it, expect } from "vitest";
import { scenario, completion } from "./run.ts";

describe("C1: a read-modify-write with only the writes fenced", () => {
  it("the stale holder's write passes the fence check and the next holder writes the same value: lost-update", async () => {
    const r = await scenario("C1");
    expect(r.code, r.out).toBe(1);
    // Both read the never-written key as 0, unfenced.
    expect(completion(r, 0, "read")).toMatchObject({ type: "ok", value: { data: 0 } });
    expect(completion(r, 1, "read")).toMatchObject({ type: "ok", value: { data: 0 } });
    const reads = (p: number) => r.decisions.filter((d) => d.process === p && d.op === "read");
    expect(reads(1)[0]).toMatchObject({ fence: null, accepted: true });
    const [a] = r.writesOf(0);
    const [b] = r.writesOf(1);
    expect(a).toMatchObject({ fence: 1, data: 1, accepted: true });
    expect(b).toMatchObject({ fence: 2, data: 1, accepted: true });
    // A's stale write landed after B's read and before B's write.
    expect(a.seq).toBeGreaterThan(reads(1)[0].seq);
    expect(a.seq).toBeLessThan(b.seq);
    expect(r.results.anomaly_types).toEqual(["lost-update"]);
    expect(r.results.anomalies["lost-update"][0].seqs).toEqual([a.seq, b.seq]);
    expect(r.out).toMatch(/Scenario C1: found lost-update, as the catalogue predicts/);
  });

  it("--fence-reads: B's read advances the fence, A's write is refused, and the run is valid", async () => {
    const r = await scenario("C1", "--fence-reads");
    expect(r.code, r.out).toBe(0);
    // Fenced reads record the hold they were sent for, as writes do.
    expect(r.of(1, "read", "invoke")[0]).toMatchObject({ value: { fence: 2 } });
    const reads = (p: number) => r.decisions.filter((d) => d.process === p && d.op === "read");
    expect(reads(1)[0]).toMatchObject({ fence: 2, accepted: true });
    expect(r.writesOf(0)[0]).toMatchObject({ fence: 1, accepted: false });
    expect(completion(r, 0, "write")).toMatchObject({ type: "fail", error: "stale-fence", value: { seen: 2 } });
    // B writes with the fence its own read set: an equal fence is its own.
    expect(r.writesOf(1)[0]).toMatchObject({ fence: 2, data: 1, accepted: true });
    expect(r.results.valid).toBe(true);
    expect(r.results.stats.stale_writes_refused).toBe(1);
    expect(r.out).toMatch(/Scenario C1: found valid, as the catalogue predicts/);
  });
});
