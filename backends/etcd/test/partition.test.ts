// The partition nemesis on a real etcd cluster, run as a user runs it: a grudge
// cuts worker-to-member links and, through block_from on the members' peer
// proxies, the members from each other; the history names both cuts, the run
// reaches a verdict, and nothing is left running.
import { describe, it, expect } from "vitest";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { isolateLeaderRun } from "../../../test/nemesis/isolate-leader.ts";

describe("partition nemesis on etcd", () => {
  it("isolates the leader from the other members and from every worker, and heals", async () => {
    const { dir, starts } = await isolateLeaderRun("etcd", ["etcd-1", "etcd-2", "etcd-3"], [1500, 2500]);
    // The first isolated leader's log shows it losing its quorum.
    expect(readFileSync(join(dir, "logs", `${starts[0].value.leader}.log`), "utf8")).toMatch(/stepped down to follower since quorum is not active|lost leader/);
  });
});
