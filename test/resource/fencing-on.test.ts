// With fencing on, the resource applies a write only if its fence is higher than
// every fence accepted before on that key (docs/history-format.md), and says so in
// its log.
import { describe, expect, it } from "vitest";
import { resourceForSuite } from "./helpers.ts";

describe("resource with fencing on", () => {
  const s = resourceForSuite({ fencing: true });

  it("applies higher fences, refuses lower and equal ones, and logs each decision exactly", async () => {
    const before = s.r.clock();
    expect(await s.client.write("k1", { owner: "a", fence: 5, process: 0, data: { v: 1 } })).toEqual({ type: "ok", fence: 5 });
    expect(await s.client.write("k1", { owner: "b", fence: 7, process: 1, data: { v: 2 } })).toEqual({ type: "ok", fence: 7 });
    expect(await s.client.write("k1", { owner: "a", fence: 5, process: 0, data: { v: 3 } })).toEqual({
      type: "fail",
      error: "stale-fence",
      seen: 7,
      got: 5,
    });
    // Equal is stale too: a second write with one fence means two holds share it.
    expect(await s.client.write("k1", { owner: "c", fence: 7, process: 2, data: { v: 4 } })).toEqual({
      type: "fail",
      error: "stale-fence",
      seen: 7,
      got: 7,
    });
    // A refused write must not have moved the key's fence: 6 < 7 stays stale, 8 goes.
    expect((await s.client.write("k1", { owner: "d", fence: 6, process: 3, data: 6 })).type).toBe("fail");
    expect(await s.client.write("k1", { owner: "e", fence: 8, process: 4, data: [1, "x", null] })).toEqual({ type: "ok", fence: 8 });
    // Keys are independent.
    expect(await s.client.write("k2", { owner: "f", fence: 0, process: 5, data: "s" })).toEqual({ type: "ok", fence: 0 });
    expect(await s.client.read("k1", { process: 6 })).toEqual({ type: "ok", data: [1, "x", null], fence: 8 });
    const after = s.r.clock();

    const log = s.r.decisions();
    const base = { fencing: true };
    expect(log.map(({ time: _t, ...rest }) => rest)).toEqual([
      { seq: 1, op: "write", key: "k1", process: 0, owner: "a", fence: 5, max_before: null, accepted: true, data: { v: 1 }, ...base },
      { seq: 2, op: "write", key: "k1", process: 1, owner: "b", fence: 7, max_before: 5, accepted: true, data: { v: 2 }, ...base },
      { seq: 3, op: "write", key: "k1", process: 0, owner: "a", fence: 5, max_before: 7, accepted: false, data: { v: 3 }, ...base },
      { seq: 4, op: "write", key: "k1", process: 2, owner: "c", fence: 7, max_before: 7, accepted: false, data: { v: 4 }, ...base },
      { seq: 5, op: "write", key: "k1", process: 3, owner: "d", fence: 6, max_before: 7, accepted: false, data: 6, ...base },
      { seq: 6, op: "write", key: "k1", process: 4, owner: "e", fence: 8, max_before: 7, accepted: true, data: [1, "x", null], ...base },
      { seq: 7, op: "write", key: "k2", process: 5, owner: "f", fence: 0, max_before: null, accepted: true, data: "s", ...base },
      { seq: 8, op: "read", key: "k1", process: 6, owner: "", fence: null, max_before: 8, accepted: true, data: [1, "x", null], ...base },
    ]);
    // Field order as the contract's table, and times on the run's shared clock.
    for (const line of s.r.logText().trimEnd().split("\n")) {
      expect(Object.keys(JSON.parse(line))).toEqual(["seq", "time", "op", "key", "process", "owner", "fence", "max_before", "accepted", "data", "fencing"]);
    }
    const times = log.map((d) => d.time);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times.every((t) => Number.isInteger(t) && t >= before && t <= after)).toBe(true);
  });

  it("answers the contract's status codes and bodies", async () => {
    const put = (fence: number): Promise<Response> =>
      fetch(`${s.r.handle.url}/r/codes`, {
        method: "PUT",
        headers: { "X-Fence-Token": String(fence), "X-Lock-Owner": "o", "X-Process": "9" },
        body: JSON.stringify({ fence }),
      });
    const ok = await put(3);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true, fence: 3 });
    const stale = await put(2);
    expect(stale.status).toBe(409);
    expect(await stale.json()).toEqual({ error: "stale fencing token", seen: 3, got: 2 });
  });

  it("reads a key never written as null data and null fence", async () => {
    expect(await s.client.read("never", { process: 1, owner: "h" })).toEqual({ type: "ok", data: null, fence: null });
    const last = s.r.decisions().at(-1);
    expect(last).toMatchObject({ op: "read", key: "never", owner: "h", fence: null, max_before: null, accepted: true, data: null });
  });

  it("decides concurrent writes one at a time: the log replays to the same verdicts", async () => {
    const fences = Array.from({ length: 60 }, (_, i) => (i * 37) % 23);
    const outcomes = await Promise.all(
      fences.map((fence, i) => s.client.write("race", { owner: `o${i}`, fence, process: 100 + i, data: i })),
    );
    const log = s.r.decisions().filter((d) => d.key === "race");
    expect(log).toHaveLength(fences.length);
    const seqs = log.map((d) => d.seq);
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0] + i));
    let max: number | null = null;
    for (const d of log) {
      expect(d.max_before).toBe(max);
      expect(d.accepted).toBe(max === null || (d.fence as number) > max);
      if (d.accepted) max = d.fence;
      // Each client heard what the log says.
      expect(outcomes[d.data as number].type).toBe(d.accepted ? "ok" : "fail");
    }
    expect(await s.client.read("race", { process: 0 })).toMatchObject({ fence: 22 });
  });
});
