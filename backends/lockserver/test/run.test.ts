// Whole runs against the run's own lock server: a holder frozen past its lease
// writes late, which fencing refuses and the checker finds without it; and
// nothing of the server outlives the run.
import { describe, it, expect } from "vitest";
import { jepsenRun, processesMentioning, waitFor } from "../../../test/helpers.ts";

// Client 0 sleeps 1.2 s (three leases) after each grant, so the server grants the
// lock to the next waiter meanwhile and client 0's write comes late: a stale
// write in every run.
const quick = ["--backend", "lockserver", "--concurrency", "3", "--workers", "2", "--ttl", "400", "--work", "50", "--rate", "10", "--acquire-timeout", "1200", "--nemesis", "pause", "--nemesis-interval", "0.6", "--grace", "2", "--time-limit", "3", "--pause", "1200", "--pause-clients", "0"];

describe("lockserver runs", () => {
  it("under pause with fencing: valid, the late holder's write refused as stale, no server left", async () => {
    const r = await jepsenRun([...quick, "--fence", "on"], "fc-ls-");
    expect(r.exit, r.output).toBe(0);
    expect(r.results?.valid, r.output).toBe(true);
    expect((r.results as unknown as { stats: { stale_writes_refused: number } }).stats.stale_writes_refused).toBeGreaterThan(0);
    await waitFor(() => processesMentioning(r.store).length === 0, 8000);
    expect(processesMentioning(r.store)).toEqual([]);
  });

  it("under pause without fencing: invalid, the late write found", async () => {
    const r = await jepsenRun([...quick, "--fence", "off"], "fc-ls-");
    expect(r.exit, r.output).toBe(1);
    expect(r.results?.anomaly_types, r.output).toContain("stale-write-accepted");
  });
});
