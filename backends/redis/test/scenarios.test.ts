// L5: redisson #4698, a failed watchdog renewal only logged. The holder's link
// to Redis is cut past lockWatchdogTimeout; the key lapses, client 1 takes it and
// writes, and client 0, told nothing, writes after it. One run of 11 s (plus the
// Redisson environment's first build when the suite's set-up has not made it).
import { describe, it, expect } from "vitest";
import { completion, foundAsPredicted, lateWrite, scenario } from "../../../test/scenarios/run.ts";

describe("L5: Redisson's watchdog renewal fails during a cut (redisson #4698)", () => {
  it("--client redisson: client 1 is granted during the cut, client 0 is never told and writes after it: stale-write-accepted", async () => {
    const r = await scenario("L5");
    foundAsPredicted(r, "L5", ["stale-write-accepted"]);
    const [cut] = r.nemesis("start-partition");
    const [healed] = r.nemesis("stop-partition");
    expect(cut.value).toMatchObject({ targets: ["worker-1->redis-1"] });
    const a = completion(r, 0, "acquire");
    const b = completion(r, 1, "acquire");
    expect(a).toMatchObject({ type: "ok" });
    expect(a.time).toBeLessThan(cut.time);
    // The key lapsed during the cut: client 1 was granted before it healed.
    expect(b).toMatchObject({ type: "ok" });
    expect(b.time).toBeGreaterThan(cut.time);
    expect(b.time).toBeLessThan(healed.time);
    // Redisson gives no notice of the failed renewals.
    expect(r.history.filter((e) => e.process === 0 && e.type === "notice")).toEqual([]);
    const { late } = lateWrite(r);
    expect(late.accepted).toBe(true);
    const [w] = r.results.anomalies["stale-write-accepted"];
    expect(w.seqs).toEqual(expect.arrayContaining([late.seq]));
  });
});
