// Library tests (`npm run test:libraries`, not in `npm test`): Hazelcast's
// FencedLock in unsafe mode (no CP members, 5.5 and later's default without a
// licence) in a whole run under partitions: each side of a split brain keeps its
// own copy of the lock. Nine JVMs; the fenced run under pauses is run.test.ts,
// in `npm test`.
import { describe, it, expect } from "vitest";
import { jepsenRun, survivors } from "../../../test/helpers.ts";

describe("hazelcast in unsafe mode (--hazelcast-cp unsafe)", () => {
  it("FencedLock without CP members under partitions: each side of a split brain keeps its own copy of the lock, so even fenced runs find two holds with one fence", async () => {
    const r = await jepsenRun(["--backend", "hazelcast", "--hazelcast-cp", "unsafe", "--concurrency", "4", "--workers", "2", "--ttl", "2000", "--nemesis", "partition", "--partition", "majority-minority", "--fault-min", "7000", "--fault-max", "9000", "--nemesis-interval", "1", "--time-limit", "25", "--fence", "on", "--seed", "5"], "fc-hz-");
    expect(r.exit, r.output).toBe(1);
    expect(r.results?.anomaly_types).toEqual(expect.arrayContaining(["duplicate-fence"]));
    expect(await survivors(r.store)).toEqual([]);
  }, 120_000);
});
