// The partition nemesis on a real etcd cluster, run as a user runs it: a grudge
// cuts worker-to-member links and, through block_from on the members' peer
// proxies, the members from each other; the history names both cuts, the run
// reaches a verdict, and nothing is left running.
import { describe, it, expect } from "vitest";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { tempRunDir, runCli, latestRun, readNdjson, processesMentioning } from "../helpers.ts";

describe("partition nemesis on etcd", () => {
  it("isolates the leader from the other members and from every worker, and heals", async () => {
    const store = tempRunDir("fc-etcd-part-");
    const cli = runCli("test-jepsen", [
      "--backend", "etcd", "--nemesis", "partition", "--partition", "isolate-leader",
      "--concurrency", "4", "--workers", "2", "--work", "5", "--seed", "5",
      "--nemesis-interval", "0.5", "--fault-min", "1500", "--fault-max", "2500", "--time-limit", "6", "--store", store,
    ]);
    const code = await cli.exit;
    expect(code, cli.stderr()).toBe(0);
    const dir = latestRun(store);
    const events = readNdjson(join(dir, "history.ndjson")).slice(1);
    const starts = events.filter((e) => e.f === "start-partition") as Array<{ value: { leader: string; member_cuts: string[][]; targets: string[] } }>;
    expect(starts.length).toBeGreaterThan(0);
    for (const { value } of starts) {
      expect(value.leader).toMatch(/^etcd-[123]$/);
      const others = ["etcd-1", "etcd-2", "etcd-3"].filter((m) => m !== value.leader);
      expect(value.member_cuts).toEqual(others.map((o) => [value.leader, o].sort()));
      expect(value.targets.sort()).toEqual([`worker-1->${value.leader}`, `worker-2->${value.leader}`]);
    }
    expect(events.filter((e) => e.f === "stop-partition")).toHaveLength(starts.length);
    const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
    expect(results.valid).toBe(true);
    // The first isolated leader's log shows it losing its quorum.
    expect(readFileSync(join(dir, "logs", `${starts[0].value.leader}.log`), "utf8")).toMatch(/stepped down to follower since quorum is not active|lost leader/);
    expect(processesMentioning(store)).toEqual([]);
  });
});
