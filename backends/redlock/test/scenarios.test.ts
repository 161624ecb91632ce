// K3, K4 and K5: Redlock's own failures. Two clients reach different majorities
// (scripted partitions); a clock jump (K3) or a restart without persistence (K4)
// on the node they share lets both hold the lock: a mutex-violation whose witness
// names both acquires. K5 sets a client that checks validity against one that
// does not, on the same stall. K7 is K4 through go-redsync/redsync (redsync PR
// #147: Redis nodes kept in memory, one restarted).
import { CLOCK, ensure } from "../../../setup/index.ts";
import { describe, it, expect, beforeAll } from "vitest";
import { scenario, completion, type Event } from "../../../test/scenarios/run.ts";

beforeAll(async () => {
  // Moving a clock needs libfaketime and our malloc shim (built into the cache); vitest run directly skips `pretest`.
  await ensure([CLOCK]);
}, 300_000);

type Run = Awaited<ReturnType<typeof scenario>>;

/** Both clients acquired, each from its own majority, and the witness names both oks. */
function expectTwoMajorities(r: Run): { a: Event; b: Event } {
  const a = completion(r, 0, "acquire");
  const b = completion(r, 1, "acquire");
  expect(a).toMatchObject({ type: "ok", value: { granted: ["redis-1", "redis-2", "redis-3"] } });
  expect(b).toMatchObject({ type: "ok", value: { granted: ["redis-3", "redis-4", "redis-5"] } });
  const [w] = r.results.anomalies["mutex-violation"];
  expect(w.events).toEqual(expect.arrayContaining([a.index, b.index]));
  // Client 1 got its majority before client 0 let go.
  expect(b.time).toBeLessThan(r.of(0, "release", "invoke")[0].time);
  return { a, b };
}

describe("K3: a clock jump on the shared node", () => {
  it("gives two majorities at once: mutex-violation, the jump between the two acquires", async () => {
    const r = await scenario("K3");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types).toEqual(["mutex-violation"]);
    const { a, b } = expectTwoMajorities(r);
    const [bump] = r.nemesis("bump-clock");
    expect(bump.value).toMatchObject({ targets: ["redis-3"], offset_ms: 9000, mode: "bump" });
    expect(bump.time).toBeGreaterThan(a.time);
    expect(bump.time).toBeLessThan(b.time);
    expect(r.nemesis("reset-clock")).toHaveLength(1);
    expect(r.nemesis("start-partition")[0].value).toMatchObject({
      mode: "reset",
      targets: ["worker-1->redis-4", "worker-1->redis-5", "worker-2->redis-1", "worker-2->redis-2"],
    });
  });
});

describe("K4: the shared node restarts", () => {
  it("without persistence it forgets client 0's key and grants client 1: mutex-violation", async () => {
    const r = await scenario("K4");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types).toEqual(["mutex-violation"]);
    const { a, b } = expectTwoMajorities(r);
    const [kill] = r.nemesis("kill");
    const [restart] = r.nemesis("restart");
    expect(kill.value).toEqual({ targets: ["redis-3"], restart_delay_ms: 300 });
    expect(a.time).toBeLessThan(kill.time);
    expect(restart.time).toBeLessThan(b.time);
  });

  it("with --redis-persistence always and a restart delay above the TTL: no violation", async () => {
    const r = await scenario("K4", "--redis-persistence", "always", "--restart-delay", "3500");
    expect(r.code, r.out).toBe(0);
    expect(r.results.valid).toBe(true);
    const [kill] = r.nemesis("kill");
    const [restart] = r.nemesis("restart");
    expect(restart.time - kill.time).toBeGreaterThanOrEqual(3500e6);
    // Client 1 got the lock only once client 0's hold was over, if at all.
    const b = completion(r, 1, "acquire");
    if (b.type === "ok") expect(b.time).toBeGreaterThan(r.of(0, "release", "invoke")[0].time);
  });
});

describe("K5: a client stalls between the node replies and its decision", () => {
  it("without the validity check it believes it holds the lock (negative validity: expired-on-arrival) while client 1 does: lost-update", async () => {
    const r = await scenario("K5");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types.sort()).toEqual(["expired-on-arrival", "lost-update"]);
    const a = completion(r, 0, "acquire");
    const b = completion(r, 1, "acquire");
    expect(a).toMatchObject({ type: "ok", value: { granted: ["redis-1", "redis-2", "redis-3", "redis-4", "redis-5"] } });
    expect(a.value!.validity_ms as number).toBeLessThan(0);
    expect(b).toMatchObject({ type: "ok", value: { granted: ["redis-1", "redis-2", "redis-3", "redis-4", "redis-5"] } });
    // Client 1 took all five while client 0 stalled.
    expect(b.time).toBeLessThan(a.time);
    const [expired] = r.results.anomalies["expired-on-arrival"];
    expect(expired.events).toContain(a.index);
    expect(expired.explanation).toContain(`validity_ms ${a.value!.validity_ms}`);
    const [w] = r.results.anomalies["lost-update"];
    expect(w.seqs).toEqual(expect.arrayContaining([r.writesOf(0)[0].seq, r.writesOf(1)[0].seq]));
    expect(r.writesOf(0)).toMatchObject([{ data: 1, accepted: true }]);
    expect(r.writesOf(1)).toMatchObject([{ data: 1, accepted: true }]);
  });

  it("with the validity check it refuses the lock (expired) and never touches the resource: valid", async () => {
    const r = await scenario("K5", "--redlock-check-validity", "on");
    expect(r.code, r.out).toBe(0);
    expect(completion(r, 0, "acquire")).toMatchObject({ type: "fail", error: "expired" });
    expect(completion(r, 1, "acquire")).toMatchObject({ type: "ok" });
    expect(r.of(0, "read")).toEqual([]);
    expect(r.writesOf(0)).toEqual([]);
  });
});

describe("K7: redsync, the shared node restarts without persistence (redsync PR #147)", () => {
  it("--client redsync: redis-3 forgets client 0's key and grants client 1 its majority: mutex-violation", async () => {
    const r = await scenario("K7");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types).toEqual(["mutex-violation"]);
    const a = completion(r, 0, "acquire");
    const b = completion(r, 1, "acquire");
    expect(a.type).toBe("ok");
    expect(b.type).toBe("ok");
    const [w] = r.results.anomalies["mutex-violation"];
    expect(w.events).toEqual(expect.arrayContaining([a.index, b.index]));
    const [kill] = r.nemesis("kill");
    const [restart] = r.nemesis("restart");
    expect(kill.value).toEqual({ targets: ["redis-3"], restart_delay_ms: 300 });
    // Client 0 held before the kill; client 1 got its majority after redis-3 came back, before client 0 let go.
    expect(a.time).toBeLessThan(kill.time);
    expect(restart.time).toBeLessThan(b.time);
    expect(b.time).toBeLessThan(r.of(0, "release", "invoke")[0].time);
  });
});
