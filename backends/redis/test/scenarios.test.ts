// L5: redisson #4698, a failed watchdog renewal only logged. The holder's link
// to Redis is cut past lockWatchdogTimeout; the key lapses, client 1 takes it and
// writes, and client 0, told nothing, writes after it. One run of 11 s (two or
// three where Redisson's client was made too late for the script: see the test),
// plus the Redisson environment's first build when the suite's set-up has not made it.
// F3: bsm/redislock #93, no fencing token at v0.9.4: a holder stopped past its
// TTL writes after the next holder. One run of about 4 s.
import { describe, it, expect } from "vitest";
import { completion, foundAsPredicted, lateWrite, scenario, scenarioWhere } from "../../../test/scenarios/run.ts";

describe("L5: Redisson's watchdog renewal fails during a cut (redisson #4698)", () => {
  it("--client redisson: client 1 is granted during the cut, client 0 is never told and writes after it: stale-write-accepted", async () => {
    // The script cuts the link at 5 s, and client 0 must hold by then: its grant
    // waits on its JVM making Redisson's client, 1.3 to 5.5 s on two busy cores. A
    // run whose grant came after the cut began shows nothing of #4698 (client 0
    // never held across it) and is made again, up to three runs in all.
    const r = await scenarioWhere("L5", (x) => {
      const [cutAt] = x.nemesis("start-partition");
      const got = x.of(0, "acquire", "ok")[0];
      return cutAt !== undefined && got !== undefined && got.time < cutAt.time;
    });
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

describe("F3: bsm/redislock v0.9.4 mints no fencing token (bsm/redislock #93)", () => {
  it("--client bsm-redislock: client 0 stops past its TTL, client 1 obtains and writes, client 0 writes after it and learns only at Release: stale-write-accepted", async () => {
    const r = await scenario("F3");
    foundAsPredicted(r, "F3", ["stale-write-accepted"]);
    const { late, next } = lateWrite(r);
    expect(late.accepted).toBe(true);
    // Client 1 obtained the key when it expired, while client 0 was stopped.
    const b = completion(r, 1, "acquire");
    expect(b.time).toBeLessThan(r.of(0, "write", "invoke")[0].time);
    expect(next.accepted).toBe(true);
    // Release is where v0.9.4 says so (ErrLockNotHeld), after the write; no notice came before it.
    expect(completion(r, 0, "release").value).toMatchObject({ released: false });
    expect(r.history.filter((e) => e.process === 0 && e.type === "notice")).toEqual([]);
  });
});
