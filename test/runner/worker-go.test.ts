// A worker told "go" after the time zero it names has started its clients late
// (the runner's lead, START_LEAD_MS, is meant to make that impossible): it says
// so, as a warning for the console; told in time, it says nothing.
import { describe, it, expect } from "vitest";
import { ProcessGroup } from "../../cluster/processes.ts";
import { spawnWorker } from "../../runner/workers.ts";
import { TEST_OPTIONS, buildTest } from "../../runner/options.ts";
import { parseArgs } from "../../lib/index.ts";
import { newRunStart, runClock } from "../../store/clock.ts";
import { tempRunDir } from "../helpers.ts";

/** What the worker warns of when told to go `lateMs` after time zero (negative: before it), with nothing to do after. */
async function warningsWhenLate(lateMs: number): Promise<string[]> {
  const dir = tempRunDir();
  const group = new ProcessGroup(dir);
  const warnings: string[] = [];
  try {
    const w = await spawnWorker(group, "worker-1", dir, () => {}, { onWarning: (m) => warnings.push(m) });
    const test = buildTest(parseArgs([], TEST_OPTIONS).options);
    const t0 = newRunStart();
    // Nothing listens on port 9: the client connects on its first acquire, and there is none.
    const nowhere = { name: "redis-1", host: "127.0.0.1", port: 9 };
    await w.setup({
      worker: "worker-1", clients: [0], concurrency: 1, seed: 1, t0: t0.toString(), endpoints: { 0: [nowhere] }, client: "redis", clientOptions: {},
      backend: "redis", workload: "fenced-write", opts: test.workloadOptions, resourceUrl: "http://127.0.0.1:9", commandTimeoutMs: 1000,
    });
    // The run ends where it starts: no client makes an attempt.
    const startAt = runClock(t0)() - lateMs * 1e6;
    w.send({ type: "go", startAt, endAt: startAt });
    await w.done;
    return warnings;
  } finally {
    await group.stopAll();
  }
}

describe("a worker's go", () => {
  it("after time zero is a warning; before it, none", async () => {
    expect(await warningsWhenLate(50)).toEqual([expect.stringMatching(/^its "go" came \d+\.\d ms after time zero: its clients' first attempts were made that late$/)]);
    expect(await warningsWhenLate(-200)).toEqual([]);
  });
});
