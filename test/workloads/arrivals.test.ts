// The open-model schedule of one client: its own timeline while it keeps up, no
// burst of missed attempts after it was held up.
import { describe, it, expect } from "vitest";
import { Arrivals } from "../../workloads/arrivals.ts";
import { rng } from "../../lib/random.ts";

const MS = 1e6;

describe("Arrivals", () => {
  it("the first attempt is at the start; a client that keeps up gets attempts at the rate, whatever its operations take", () => {
    const a = new Arrivals(500 * MS, 10, rng(1, "t"));
    expect(a.after(0)).toBe(500 * MS);
    // Each operation finishes at once: the gaps are the timeline's own.
    let last = 500 * MS;
    const gaps: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const next = a.after(last);
      gaps.push(next - last);
      last = next;
    }
    const mean = gaps.reduce((x, y) => x + y, 0) / gaps.length / MS;
    expect(mean).toBeGreaterThan(90);
    expect(mean).toBeLessThan(110);
  });

  it("stays an open model: operations of 30 ms at 10 attempts/s do not stretch the mean gap to 100 + 30 ms", () => {
    const a = new Arrivals(0, 10, rng(3, "t"));
    let t = a.after(0);
    const first = t;
    const n = 2000;
    for (let i = 0; i < n; i++) t = a.after(t + 30 * MS);
    // Open: E[max(gap, 30 ms)] = 30 + 100 e^-0.3 = 104 ms; think time after each
    // operation (a closed model) would give 130 ms.
    const mean = (t - first) / n / MS;
    expect(mean).toBeGreaterThan(95);
    expect(mean).toBeLessThan(117);
  });

  it("a client held up for 5 s at 20 attempts/s does not fire the ~100 attempts it missed back to back", () => {
    const a = new Arrivals(0, 20, rng(2, "t"));
    let t = a.after(0);
    t = a.after(t); // on time
    const released = t + 5000 * MS; // the operation took 5 s (a partition)
    // The attempts that follow, each operation taking 1 ms.
    let now = released;
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const next = a.after(now);
      expect(next).toBeGreaterThanOrEqual(now);
      times.push(next);
      now = Math.max(next, now) + 1 * MS;
    }
    // Twenty attempts at 20/s take about a second, not the 20 ms of a burst.
    expect((times[19] - released) / MS).toBeGreaterThan(400);
  });

  it("the same seed gives the same schedule", () => {
    const run = (): number[] => {
      const a = new Arrivals(0, 5, rng(7, "client", 3));
      const out: number[] = [];
      for (let i = 0, now = 0; i < 50; i++) out.push((now = a.after(now + (i % 7) * 30 * MS)));
      return out;
    };
    expect(run()).toEqual(run());
  });
});
