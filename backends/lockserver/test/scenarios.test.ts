// The majority manager's scenarios on five real lock servers. M2: a server that
// granted the lock restarts without its journal and grants it again: two
// majorities at once. M3: fences as the largest of the granting majority's
// counters fall once different majorities have granted, and a frozen holder's
// late write is accepted with fencing on. M4: the same with one counter, whose
// fences only rise: the late write refused. M1 (a holder frozen past its lease,
// K1's shape) is predicted in the catalogue test and shown in docs/experiments.md.
import { describe, it, expect } from "vitest";
import { completion, scenario, type Run } from "../../../test/scenarios/run.ts";

/** Each client's fence and the servers that made its majority, by process. */
const grants = (r: Run) =>
  Object.fromEntries(
    [0, 1, 2, 3, 4, 5].flatMap((p) => r.of(p, "acquire", "ok").map((e) => [p, { fence: e.value?.fence, granted: e.value?.granted }])),
  ) as Record<number, { fence: number; granted: string[] }>;

describe("the majority manager's scenarios", () => {

  it("M2: lockserver-3 restarts empty and grants client 1 while client 0 holds 1,2,3: mutex-violation, both fences 1", async () => {
    const r = await scenario("M2");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types.sort()).toEqual(["duplicate-fence", "mutex-violation"]);
    const a = completion(r, 0, "acquire"), b = completion(r, 1, "acquire");
    expect(a.value).toMatchObject({ fence: 1, granted: ["lockserver-1", "lockserver-2", "lockserver-3"] });
    expect(b.value).toMatchObject({ fence: 1, granted: ["lockserver-3", "lockserver-4", "lockserver-5"] });
    const [kill] = r.nemesis("kill");
    expect(kill.value).toEqual({ targets: ["lockserver-3"], restart_delay_ms: 300 });
    expect(a.time).toBeLessThan(kill.time);
    // Client 1 got its majority before client 0 let go.
    expect(b.time).toBeLessThan(r.of(0, "release", "invoke")[0].time);
    expect(r.results.anomalies["mutex-violation"][0].events).toEqual(expect.arrayContaining([a.index, b.index]));
  });

  it("M3: the largest of five: client 5's fence falls below frozen client 4's, its write is refused and client 4's late write accepted", async () => {
    const r = await scenario("M3");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types.sort()).toEqual(["duplicate-fence", "fence-regression"]);
    const g = grants(r);
    expect([0, 1, 2, 3, 4].map((p) => g[p].fence)).toEqual([1, 2, 3, 4, 5]);
    expect(g[4].granted).toContain("lockserver-1");
    expect(g[5].granted).not.toContain("lockserver-1");
    expect(g[5].fence).toBe(4);
    // Client 5 held the lock when client 4 wrote, yet only client 4's write took effect.
    const [five] = r.writesOf(5);
    const [four] = r.writesOf(4);
    expect(five).toMatchObject({ fence: 4, accepted: false });
    expect(four).toMatchObject({ fence: 5, accepted: true });
    expect(four.seq).toBeGreaterThan(five.seq);
  });

  it("M4: one counter: client 5's fence is above client 4's, and client 4's late write is refused", async () => {
    const r = await scenario("M4");
    expect(r.code, r.out).toBe(0);
    expect(r.results.valid).toBe(true);
    const g = grants(r);
    expect(g[5].granted).not.toContain("lockserver-1");
    expect(g[5].fence).toBeGreaterThan(g[4].fence);
    const [five] = r.writesOf(5);
    const [four] = r.writesOf(4);
    expect(five.accepted).toBe(true);
    expect(four).toMatchObject({ accepted: false });
    expect(four.seq).toBeGreaterThan(five.seq);
  });
});
