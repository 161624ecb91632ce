// With fencing off every write takes effect, and max_before is still recorded so
// the checker can see what fencing would have refused.
import { describe, expect, it } from "vitest";
import { resourceForSuite } from "./helpers.ts";

describe("resource with fencing off", () => {
  const s = resourceForSuite({ fencing: false });

  it("accepts every write and records the highest fence before each", async () => {
    for (const [fence, owner] of [[4, "a"], [2, "b"], [4, "c"], [9, "d"], [1, "e"]] as const) {
      expect(await s.client.write("k", { owner, fence, process: fence, data: owner })).toEqual({ type: "ok", fence });
    }
    // The last write took effect even though its fence was the lowest.
    expect(await s.client.read("k", { process: 0 })).toEqual({ type: "ok", data: "e", fence: 9 });
    expect(s.r.decisions().map((d) => [d.op, d.fence, d.max_before, d.accepted, d.data, d.fencing])).toEqual([
      ["write", 4, null, true, "a", false],
      ["write", 2, 4, true, "b", false],
      ["write", 4, 4, true, "c", false],
      ["write", 9, 4, true, "d", false],
      ["write", 1, 9, true, "e", false],
      ["read", null, 9, true, "e", false],
    ]);
  });
});
