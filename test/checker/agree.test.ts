// npm test's share of the checker fuzz (test/checker/fuzz/): for 11 seconds,
// generated runs of a lock and a resource under faults, each checked by the fast
// checker and by the reference checker, which must give the same valid, anomaly
// types and counts; and every disagreement kept under test/checker/fuzz-found/,
// checked again by both. `npm run fuzz:checker` runs the same property for as long
// as asked, with the coverage of what it made.
//
// The seed is fixed (below) and printed on failure, with fast-check's path to the
// shrunk case and the folder it was kept in. Replay it with
//   FUZZ_SEED=<seed> FUZZ_PATH=<path> npx vitest run test/checker/agree.test.ts
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fast, reference } from "./fuzz/checkers.ts";
import { compare, verdictLine } from "./fuzz/compare.ts";
import { keepCase, keptCases } from "./fuzz/keep.ts";
import { describePlan } from "./fuzz/plan.ts";
import { agreement, outcomeLine, runCase } from "./fuzz/property.ts";

/** The fuzz's share of the file's time, and then shrinking's, if it fails: 16 s at most. */
const BUDGET_MS = 11_000;
const SHRINK_MS = 5_000;
// A fixed seed and number of cases, so that the suite is the same on every
// machine (a slow one may stop at the budget, earlier in the same sequence);
// FUZZ_SEED and FUZZ_RUNS explore further, as `npm run fuzz:checker` does.
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 20261129;
const RUNS = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 400;
const PATH = process.env.FUZZ_PATH;

describe("the fast checker and the reference checker", () => {
  it("agree on generated runs: valid, anomaly types (as sets) and their counts", async () => {
    let checked = 0;
    const order: string[] = [];
    // Found first, not shrunk: fast-check's shrinking would go to whatever smaller
    // case disagrees, which may be another disagreement than the one found.
    const found = await fc.check(
      agreement(reference, (r) => {
        checked++;
        if (r.comparison.orderDiffers && order.length < 3) order.push(`fast [${outcomeLine(r.fast)}], reference [${outcomeLine(r.other)}]`);
      }),
      { seed: SEED, ...(PATH ? { path: PATH } : {}), numRuns: PATH ? 1 : RUNS, interruptAfterTimeLimit: BUDGET_MS, markInterruptAsFailure: false, endOnFailure: !PATH },
    );
    // Not a disagreement: results.json lists types "in the checker's order".
    if (order.length) console.warn(`agree.test.ts: the same anomaly types in another order (seed ${SEED}):\n  ${order.join("\n  ")}`);
    let details = found;
    if (found.failed && found.counterexample && !PATH) {
      // Then shrunk from where it was found, to smaller cases that disagree the same way.
      const { signature } = (await runCase(found.counterexample[0], reference)).comparison;
      const shrunk = await fc.check(agreement(reference, undefined, signature), { seed: found.seed, path: found.counterexamplePath ?? undefined, interruptAfterTimeLimit: SHRINK_MS, markInterruptAsFailure: false });
      if (shrunk.failed && shrunk.counterexample) details = shrunk;
    }
    if (details.failed && details.counterexample) {
      const r = await runCase(details.counterexample[0], reference);
      const path = details.counterexamplePath ?? "";
      const replay = `FUZZ_SEED=${details.seed} FUZZ_PATH=${path} npx vitest run test/checker/agree.test.ts`;
      const kept = r.comparison.differences.length ? keepCase(r, { by: "test/checker/agree.test.ts", seed: details.seed, path, replay }) : "(not kept: it agreed when run again)";
      expect.fail([
        `the checkers disagree on a generated run (seed ${details.seed}, path ${path}, found after ${found.numRuns} runs, then ${details.numShrinks} shrinks)`,
        `  fast:      ${outcomeLine(r.fast)}`,
        `  reference: ${outcomeLine(r.other)}`,
        ...r.comparison.differences.map((d) => `  - ${d}`),
        `  the case: ${describePlan(r.plan)}`,
        `  kept: ${kept}`,
        `  replay: ${replay}`,
      ].join("\n"));
    }
    expect(details.failed, `fast-check failed without a counterexample: ${details.errorInstance}`).toBe(false);
    // A budget that checked almost nothing would pass while proving nothing.
    expect(checked).toBeGreaterThan(PATH ? 0 : 30);
  }, 60_000);

  it("agree on every disagreement kept in test/checker/fuzz-found/", async () => {
    const still: string[] = [];
    for (const k of keptCases()) {
      const a = await fast(k.dir, k.check);
      const b = await reference(k.dir, k.check);
      const { differences } = compare(a, b);
      if (differences.length) still.push(`${k.name}: fast ${verdictLine(a)}; reference ${verdictLine(b)} (${differences.join("; ")})`);
    }
    expect(still).toEqual([]);
  });
});
