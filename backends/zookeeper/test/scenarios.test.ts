// ZooKeeper's scenarios. Z1: a holder frozen past its session timeout loses its
// lock node to the session's expiry, the next client takes the lock and writes,
// and the holder thaws and writes before it learns: accepted without fencing
// (stale-write-accepted), refused with it; its release then says when it knew.
// Z2: a create whose reply is lost: zookeeper-naive sends it again and fails
// behind its own first node (orphan-lock-node). Their variations (Z1 with
// --fence on, Z2 with --client zookeeper: both valid) take half a minute each on
// a busy machine; the client test shows protection mode finding a lost node.
import { describe, it, expect } from "vitest";
import { scenario, completion, lateWrite } from "../../../test/scenarios/run.ts";

describe("Z1: a ZooKeeper session expires while its holder is frozen", () => {
  it("without fencing, client 0's write after thawing is accepted after client 1's; its release says the session expired", async () => {
    const r = await scenario("Z1");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types).toEqual(["stale-write-accepted"]);
    const { late, next } = lateWrite(r);
    expect(r.results.anomalies["stale-write-accepted"][0].seqs).toEqual(expect.arrayContaining([late.seq, next.seq]));
    // Client 1 was granted the lock while client 0's worker was stopped.
    const [stop] = r.nemesis("stop-pause");
    expect(r.of(1, "acquire", "ok")[0].time).toBeLessThan(stop.time);
    // Its links to ZooKeeper were cut across the thaw: the write went before the package could hear of the expiry.
    const [cut] = r.nemesis("start-partition");
    expect(cut.value).toMatchObject({ targets: ["worker-1->zk-1", "worker-1->zk-2", "worker-1->zk-3"] });
    expect(cut.time).toBeLessThan(stop.time);
    expect(completion(r, 0, "write").time).toBeLessThan(r.nemesis("stop-partition")[0].time);
    expect(completion(r, 0, "release")).toMatchObject({ type: "ok", value: { released: false, lost: "session-expired" } });
    expect(r.out).toMatch(/Scenario Z1: found stale-write-accepted, as the catalogue predicts/);
  });
});

describe("Z2: a create succeeds but its reply is lost", () => {
  it("zookeeper-naive sends the create again and fails behind its own first node: orphan-lock-node", async () => {
    const r = await scenario("Z2");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types).toEqual(["orphan-lock-node"]);
    const done = completion(r, 1, "acquire");
    expect(done).toMatchObject({ type: "fail", error: "orphan-node" });
    expect(r.results.anomalies["orphan-lock-node"][0].events).toContain(done.index);
    // The cut came after the create left and before its reply could come back.
    expect(r.nemesis("start-partition")[0].value).toMatchObject({ targets: ["worker-2->zk-1", "worker-2->zk-2", "worker-2->zk-3"], duration_ms: 500 });
    expect(r.writesOf(1)).toEqual([]);
  });
});

describe("Z3: a waiter gives up while cut off (kazoo #760)", () => {
  it("kazoo's lost delete leaves client 1's node under its live session; its next acquire fails behind it: orphan-lock-node", async () => {
    const r = await scenario("Z3");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types).toEqual(["orphan-lock-node"]);
    const acquires = r.history.filter((e) => typeof e.process === "number" && e.process % 2 === 1 && e.f === "acquire" && e.type !== "invoke");
    // The first gave up into the cut (unknown), the second waited behind the node it left.
    expect(acquires[0]).toMatchObject({ type: "info" });
    expect(acquires[1]).toMatchObject({ type: "fail", error: "orphan-node" });
    expect(r.results.anomalies["orphan-lock-node"][0].events).toContain(acquires[1].index);
    expect(r.nemesis("start-partition")[0].value).toMatchObject({ targets: ["worker-2->zk-1", "worker-2->zk-2", "worker-2->zk-3"], duration_ms: 2700 });
  });
});
