// L1: a renew that re-takes a lost lock. Client 0 is frozen past its lease with
// its watchdog; client 1 is granted the lock; client 0 thaws and renews. A blind
// SET PX renew says ok (lost-lock-unnoticed, naming client 1's acquire between
// client 0's grant and its renew); a renew that checks the owner fails, and the
// run is valid.
import { describe, it, expect } from "vitest";
import { scenario } from "./run.ts";

describe("L1: a renew re-takes a lost lock", () => {
  it("--client redis-blind-renew: client 0's renew after client 1's grant says ok: lost-lock-unnoticed, witnessed by the three operations", async () => {
    const r = await scenario("L1");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types).toContain("lost-lock-unnoticed");
    const [acquire0] = r.of(0, "acquire", "ok");
    const [acquire1] = r.of(1, "acquire", "ok");
    // The renew that came after client 1's grant, and said ok.
    const renews = r.of(0, "renew", "invoke").filter((e) => e.time > acquire1.time);
    expect(renews.length).toBeGreaterThan(0);
    const [w] = r.results.anomalies["lost-lock-unnoticed"];
    expect(w.events).toEqual(expect.arrayContaining([acquire0.index, acquire1.index, renews[0].index]));
    expect(w.explanation).toMatch(/re-took the lock silently/);
    expect(r.nemesis("start-pause")[0].value).toMatchObject({ targets: ["worker-1"], duration_ms: 2000 });
    expect(r.out).toMatch(/Scenario L1: found .*lost-lock-unnoticed.*, as the catalogue predicts/);
  });

  it("--client redis: the renew finds client 1's owner and fails, client 0 stops, and the run is valid", async () => {
    const r = await scenario("L1", "--client", "redis");
    expect(r.code, r.out).toBe(0);
    const [acquire1] = r.of(1, "acquire", "ok");
    const late = r.of(0, "renew").filter((e) => e.type !== "invoke" && e.time > acquire1.time);
    expect(late[0]).toMatchObject({ type: "fail", error: "not-owner" });
    // Told it lost the lock, client 0 does not write.
    expect(r.writesOf(0)).toEqual([]);
  });
});
