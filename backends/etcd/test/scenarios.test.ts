// E2: etcd #10811, a concurrency.Mutex holder cut from etcd past its lease.
// etcd expires the lease and grants the waiter during the cut; the holder's
// Session closes Done() when its keep-alive deadline passes, the adapter tells it
// (a lost notice) and the holder never writes: valid at client/v3 v3.7.3. One run
// of 7 s.
import { describe, it, expect } from "vitest";
import { completion, scenario } from "../../../test/scenarios/run.ts";

describe("E2: a Mutex holder cut from etcd past its lease (etcd #10811)", () => {
  it("--client etcd-mutex-go: etcd grants client 1 during the cut, client 0 is told lost during it too and never writes: valid", async () => {
    const r = await scenario("E2");
    expect(r.code, r.out).toBe(0);
    expect(r.results.valid).toBe(true);
    const [cut] = r.nemesis("start-partition");
    const [healed] = r.nemesis("stop-partition");
    expect(cut.value).toMatchObject({ targets: ["worker-1->etcd-1", "worker-1->etcd-2", "worker-1->etcd-3"] });
    const a = completion(r, 0, "acquire");
    const b = completion(r, 1, "acquire");
    expect(a.type).toBe("ok");
    expect(a.time).toBeLessThan(cut.time);
    // etcd expired client 0's lease while its links were cut and gave the lock to client 1.
    expect(b.type).toBe("ok");
    expect(b.time).toBeGreaterThan(cut.time);
    expect(b.time).toBeLessThan(healed.time);
    // The Session told client 0 before the heal, without a word from etcd.
    const lost = r.history.filter((e) => e.process === 0 && e.type === "notice" && e.f === "lost");
    expect(lost.length, r.out).toBe(1);
    expect(lost[0].time).toBeLessThan(healed.time);
    expect(r.writesOf(0)).toEqual([]);
    expect(r.writesOf(1)).toMatchObject([{ accepted: true }]);
  });
});
