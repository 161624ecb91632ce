// ZooKeeper's scenarios. Z1: a holder frozen past its session timeout loses its
// lock node to the session's expiry, the next client takes the lock and writes,
// and the holder thaws and writes before it learns: accepted without fencing
// (stale-write-accepted), refused with it; its release then says when it knew.
import { describe, it, expect } from "vitest";
import { scenario, completion } from "./run.ts";

describe("Z1: a ZooKeeper session expires while its holder is frozen", () => {
  it("without fencing, client 0's write after thawing is accepted after client 1's; its release says the session expired", async () => {
    const r = await scenario("Z1");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types).toEqual(["stale-write-accepted"]);
    const [b] = r.writesOf(1);
    const [a] = r.writesOf(0);
    expect(a.fence!).toBeLessThan(b.fence!);
    expect(a.seq).toBeGreaterThan(b.seq);
    expect(r.results.anomalies["stale-write-accepted"][0].seqs).toEqual(expect.arrayContaining([a.seq, b.seq]));
    // Client 1 was granted the lock while client 0's worker was stopped.
    const [stop] = r.nemesis("stop-pause");
    expect(r.of(1, "acquire", "ok")[0].time).toBeLessThan(stop.time);
    expect(completion(r, 0, "release")).toMatchObject({ type: "ok", value: { released: false, lost: "session-expired" } });
    expect(r.out).toMatch(/Scenario Z1: found stale-write-accepted, as the catalogue predicts/);
  });

  it("with fencing, the resource refuses it and the run is valid", async () => {
    const r = await scenario("Z1", "--fence", "on");
    expect(r.code, r.out).toBe(0);
    expect(r.writesOf(0)).toMatchObject([{ accepted: false }]);
    expect(completion(r, 0, "write")).toMatchObject({ type: "fail", error: "stale-fence" });
  });
});
