// Library tests (`npm run test:libraries`): simple-redis-mutex 3.0.0 in whole runs
// under SIGSTOP pauses of its clients: its own fence (one global INCR) shows a
// paused holder writing after the next one, and fencing at the resource refuses
// that write. What its functions do, hold by hold, is simple-redis-mutex.test.ts.
import { describe, it, expect } from "vitest";
import { jepsenRun } from "../../../test/helpers.ts";

// Its waiters hear only of releases (pub/sub) and poll every 10 s, so a holder
// paused past its TTL is overtaken only by an acquire that starts after the lease
// ran out: pauses longer than TTL + acquire timeout (1 + 2 s) let every waiter give
// up and start again. With the default pauses (0.5 to 4 x TTL) that is luck.
const run = ["--client", "simple-redis-mutex", "--nemesis", "pause", "--nemesis-interval", "1", "--pause-min", "3200", "--pause-max", "4000", "--time-limit", "8", "--seed", "3"];

describe("--client simple-redis-mutex", () => {
  it("without fencing a paused holder's write is accepted after the next holder's, as its own fences show", async () => {
    const r = await jepsenRun([...run, "--fence", "off"], "fc-srm-");
    expect(r.exit, r.output).toBe(1);
    expect(r.results?.anomaly_types).toContain("stale-write-accepted");
    const fences = r.history.filter((e) => e.type === "ok" && e.f === "acquire").map((e) => (e.value as { fence: unknown }).fence);
    expect(fences.length).toBeGreaterThan(0);
    expect(fences.every((f) => typeof f === "number")).toBe(true);
  });

  it("with its own fences and fencing on, the run is valid", async () => {
    const r = await jepsenRun(run, "fc-srm-");
    expect(r.exit, r.output).toBe(0);
    expect(r.results?.valid).toBe(true);
  });

  it("--fence-source is refused: it issues its own fences", async () => {
    const r = await jepsenRun([...run, "--fence-source", "single"], "fc-srm-");
    expect(r.exit).toBe(254);
    expect(r.stderr).toMatch(/--fence-source applies to the clients that make a fence from several servers' counters .* --client simple-redis-mutex of --backend redis issues its own fences/);
  });
});
