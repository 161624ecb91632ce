// Library tests (`npm run test:libraries`, not in `npm test`): whole runs of one
// library, what the libraries preset's soak runs too.
// @sesamecare-oss/redlock (node-redlock's maintained fork) with its own retries,
// under SIGSTOP pauses of its clients: a Redlock lease like any other, so a paused
// holder writes after the next one (fences from --fence-source single show it),
// and fencing at the resource refuses it. Each acquire reports its validity.
import { describe, it, expect } from "vitest";
import { jepsenRun } from "../../../test/helpers.ts";

const run = ["--backend", "redlock", "--client", "sesame-redlock", "--nemesis", "pause", "--nemesis-interval", "1", "--time-limit", "8", "--seed", "3"];

describe("--client sesame-redlock", () => {
  it("without fencing a paused holder's write is accepted after the next holder's; every grant reports its validity", async () => {
    const r = await jepsenRun([...run, "--fence", "off", "--fence-source", "single"], "fc-sesame-");
    expect(r.exit, r.output).toBe(1);
    expect(r.results?.anomaly_types).toContain("stale-write-accepted");
    const grants = r.history.filter((e) => e.type === "ok" && e.f === "acquire").map((e) => e.value as { fence: unknown; ttl_ms: number; validity_ms: unknown });
    expect(grants.length).toBeGreaterThan(0);
    for (const g of grants) {
      expect(typeof g.fence).toBe("number");
      // Its expiration: the winning round's start + TTL - (1% of TTL + 2 ms), so at most that from now.
      expect(typeof g.validity_ms).toBe("number");
      expect(g.validity_ms).toBeLessThanOrEqual(g.ttl_ms - (0.01 * g.ttl_ms + 2));
    }
  });

  it("with fences from one Redis counter and fencing on, no stale write is accepted: the resource finds nothing", async () => {
    const r = await jepsenRun([...run, "--fence-source", "single"], "fc-sesame-");
    // A pause that lands while an acquire is still retrying can spend the whole lease before it
    // returns: the library then says ok with a negative validity, which the checker finds as
    // expired-on-arrival (a finding about the lock, with the pauses that explain it; seen on a
    // loaded machine, 2026-11-30). Fencing cannot prevent that; what it must prevent is any
    // stale write landing, so nothing else may be found.
    const types: string[] = r.results?.anomaly_types ?? [];
    expect(types.filter((t) => t !== "expired-on-arrival"), r.output).toEqual([]);
    expect(r.exit, r.output).toBe(types.length ? 1 : 0);
    // Writes went to the resource under pauses, so there was something to refuse.
    expect(r.results?.stats.writes_accepted as number, r.output).toBeGreaterThan(0);
  });

  it("--fence on without a fence source is refused: it issues none", async () => {
    const r = await jepsenRun(run, "fc-sesame-");
    expect(r.exit).toBe(254);
    expect(r.stderr).toMatch(/--client sesame-redlock issues no fencing tokens/);
  });
});
