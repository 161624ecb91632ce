// The same seed gives the same schedule of operations and faults: which keys each
// client goes for, in what order, and which worker each fault freezes for how long.
import { describe, it, expect } from "vitest";
import { join } from "node:path";
import { tempRunDir, runCli, latestRun, readNdjson } from "../helpers.ts";

async function schedule(seed: number) {
  const store = tempRunDir("fc-seed-");
  const cli = runCli("test", [
    "--seed", String(seed), "--keys", "5", "--concurrency", "4", "--workers", "2", "--time-limit", "3",
    "--nemesis", "pause", "--pause-target", "random", "--nemesis-interval", "0.4", "--pause-min", "50", "--pause-max", "150", "--store", store,
  ]);
  expect([0, 1]).toContain(await cli.exit);
  const events = readNdjson(join(latestRun(store), "history.ndjson")).slice(1);
  const keys = new Map<number, string[]>();
  for (const e of events)
    if (e.f === "acquire" && e.type === "invoke" && typeof e.process === "number") {
      const client = e.process % 4;
      keys.set(client, [...(keys.get(client) ?? []), e.key as string]);
    }
  const faults = events.filter((e) => e.f === "start-pause").map((e) => e.value);
  return { keys, faults };
}

describe("--seed", () => {
  it("repeats the schedule of keys and faults", async () => {
    const a = await schedule(11);
    const b = await schedule(11);
    const c = await schedule(12);
    for (let client = 0; client < 4; client++) {
      const n = Math.min(a.keys.get(client)!.length, b.keys.get(client)!.length, 8);
      expect(n).toBeGreaterThan(3);
      expect(a.keys.get(client)!.slice(0, n)).toEqual(b.keys.get(client)!.slice(0, n));
    }
    const n = Math.min(a.faults.length, b.faults.length, 3);
    expect(n).toBeGreaterThan(1);
    expect(a.faults.slice(0, n)).toEqual(b.faults.slice(0, n));
    // And another seed gives another schedule.
    expect([...c.keys.values()].flat().slice(0, 12)).not.toEqual([...a.keys.values()].flat().slice(0, 12));
  });
});
