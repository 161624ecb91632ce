// fuzz:checker (test/checker/fuzz/main.ts) refuses bad options with exit 254 and a
// message naming the option, before generating anything; and a short session
// prints its speed, its coverage and its verdict, exiting 0 when nothing disagreed.
import { describe, it, expect } from "vitest";
import { runNode } from "../helpers.ts";

const fuzz = (args: string[]) => runNode(["--import", "tsx", "test/checker/fuzz/main.ts", ...args], 120_000);

describe("fuzz:checker", () => {
  it("bad options: 254, naming the option", async () => {
    const r = await fuzz(["--runs", "0"]);
    expect(r.status).toBe(254);
    expect(r.stderr).toContain("fuzz:checker: --runs must be at least 1");
  });

  it("a short session against itself: cases per second, the coverage table, exit 0", async () => {
    const r = await fuzz(["--runs", "12", "--seed", "5", "--against", "fast", "--keep", "off"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("fuzz:checker: 12 cases, seed 5, the fast checker against the fast checker");
    expect(r.stdout).toMatch(/12 cases in [\d.]+ s of checking: [\d.]+ cases per second/);
    for (const section of ["verdict (fast)", "anomaly type (either)", "lock kind", "format", "situation"]) expect(r.stdout).toContain(`  ${section}\n`);
    expect(r.stdout).toContain("no disagreement in 12 cases (seed 5)");
  });
});
