// Your lock's safety as tests of your own suite (vitest here; jest is the same):
// runTest runs `fencecheck test` with the command's options, in camelCase, and
// resolves with the verdict and results.json. Put this file beside your adapter,
// my-lock.ts (start from examples/redis-lock-adapter.ts), and run `npx vitest run`. Each run starts real
// servers, so give the tests time.
import { describe, it, expect } from "vitest";
import { runTest, type TestOptions } from "fencecheck";

// Kleppmann's K1, on demand: client 0 freezes 2.5 s holding a 1 s lease, client 1
// takes the lock and writes, client 0 wakes and writes too.
const FROZEN_HOLDER: TestOptions = {
  client: "./my-lock.ts",
  nemesis: "none",
  concurrency: 2,
  workers: 2,
  ttl: 1000,
  pause: 2500,
  pauseClients: "0",
  work: 0,
  stagger: 300,
  acquireTimeout: 3000,
  rate: 0.01,
  timeLimit: 1,
  store: "histories/vitest",
};

describe("my lock", () => {
  it("with fencing at the resource, the frozen holder's late write is refused", async () => {
    const run = await runTest({ ...FROZEN_HOLDER, fence: true });
    expect(run.valid, run.summary).toBe(true);
    expect(run.results.stats.stale_writes_refused).toBeGreaterThan(0);
  }, 60_000);

  it("without fencing, fencecheck sees the late write taking effect", async () => {
    const run = await runTest({ ...FROZEN_HOLDER, fence: false });
    expect(run.valid).toBe(false);
    expect(run.results.anomaly_types).toContain("stale-write-accepted");
    // The witness says which writes, in which order, and why: see run.summary or run.runDir/report.html.
    expect(run.results.anomalies["stale-write-accepted"][0].explanation).toMatch(/took effect after/);
  }, 60_000);
});
