// What the isolate-leader tests of every consensus backend share: one run of the
// partition nemesis with only that grudge, and the checks that each partition
// named the leader of the moment and cut it off from the other members and from
// every worker, that each was healed, that the run was valid, and that nothing was
// left running. The run directory and the partitions' start events come back for
// the backend's own checks (its members' logs).
import { expect } from "vitest";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { tempRunDir, runCli, latestRun, readNdjson, processesMentioning } from "../helpers.ts";

export interface PartitionStart {
  value: { leader: string; member_cuts: string[][]; targets: string[] };
}

export async function isolateLeaderRun(backend: string, members: string[], faultMs: [number, number]): Promise<{ dir: string; starts: PartitionStart[] }> {
  const store = tempRunDir(`fc-${backend}-part-`);
  const cli = runCli("test", [
    "--backend", backend, "--nemesis", "partition", "--partition", "isolate-leader",
    "--concurrency", "4", "--workers", "2", "--work", "5", "--seed", "5",
    "--nemesis-interval", "0.5", "--fault-min", String(faultMs[0]), "--fault-max", String(faultMs[1]), "--time-limit", "6", "--store", store,
  ]);
  const code = await cli.exit;
  expect(code, cli.stderr()).toBe(0);
  const dir = latestRun(store);
  const events = readNdjson(join(dir, "history.ndjson")).slice(1);
  const starts = events.filter((e) => e.f === "start-partition") as unknown as PartitionStart[];
  expect(starts.length).toBeGreaterThan(0);
  for (const { value } of starts) {
    expect(members).toContain(value.leader);
    const others = members.filter((m) => m !== value.leader);
    expect(value.member_cuts).toEqual(others.map((o) => [value.leader, o].sort()));
    expect(value.targets.sort()).toEqual([`worker-1->${value.leader}`, `worker-2->${value.leader}`]);
  }
  expect(events.filter((e) => e.f === "stop-partition")).toHaveLength(starts.length);
  expect(JSON.parse(readFileSync(join(dir, "results.json"), "utf8")).valid).toBe(true);
  expect(processesMentioning(store)).toEqual([]);
  return { dir, starts };
}
