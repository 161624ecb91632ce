// The validity a lock over several servers decides on is the one it reports:
// a hold is handed over only with at least 1 whole ms of its lease left, so
// no acquire ok carries validity_ms 0 (the checker's expired-on-arrival).
import { describe, it, expect } from "vitest";
import { clockDrift, validityLeft } from "../../clients/majority.ts";

describe("validityLeft", () => {
  it("is the lease less the time taken and the drift allowance, in whole ms", () => {
    expect(clockDrift(1000)).toBe(12);
    expect(validityLeft(1000, 100)).toBe(888);
    expect(validityLeft(1000, 1200)).toBe(-212);
  });

  it("rounds down, so a fraction of a ms left is not a lock to hand over", () => {
    // 1000 - 987.6 - 12 = 0.4 ms: reported and decided as 0.
    expect(validityLeft(1000, 987.6)).toBe(0);
    expect(validityLeft(1000, 986.6)).toBe(1);
  });
});
