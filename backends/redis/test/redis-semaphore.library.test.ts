// Library tests (`npm run test:libraries`, not in `npm test`): whole runs of one
// library, what the libraries preset's soak runs too.
// redis-semaphore's Mutex, as its README uses it, under SIGSTOP pauses: a lease
// like any other, so a paused holder writes after the next one (its fences from
// --fence-source single make that visible), and fencing at the resource refuses it.
import { describe, it, expect } from "vitest";
import { jepsenRun } from "../../../test/helpers.ts";

const run = ["--client", "redis-semaphore", "--nemesis", "pause", "--nemesis-interval", "1", "--time-limit", "8", "--seed", "3"];

describe("--client redis-semaphore", () => {
  it("without fencing a paused holder's write is accepted after the next holder's", async () => {
    const r = await jepsenRun([...run, "--fence", "off", "--fence-source", "single"], "fc-rsem-");
    expect(r.exit, r.output).toBe(1);
    expect(r.results?.anomaly_types).toContain("stale-write-accepted");
  });

  it("with fences from one Redis counter and fencing on, the run is valid", async () => {
    const r = await jepsenRun([...run, "--fence-source", "single"], "fc-rsem-");
    expect(r.exit, r.output).toBe(0);
    expect(r.results?.valid).toBe(true);
  });

  it("--fence on without a fence source is refused: it issues none", async () => {
    const r = await jepsenRun(run, "fc-rsem-");
    expect(r.exit).toBe(254);
    expect(r.stderr).toMatch(/--client redis-semaphore issues no fencing tokens/);
  });
});
