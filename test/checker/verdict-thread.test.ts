// A large run's verdict is drawn on two threads (checker/analyze.ts verdictThread):
// the second checks the holds' spans and runs the model check on the model's
// shared columns, quoting owners by tokens the first turns back into names. It
// must give exactly the one-thread verdict: on every fixture, with the model
// check counted (strict) or not, and with owners whose names JSON must escape.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadRun } from "../../checker/index.ts";
import { verdict, verdictThread, type CheckOptions } from "../../checker/analyze.ts";
import { buildModel, type RunInput } from "../../checker/model.ts";
import type { HistoryEvent } from "../../store/events.ts";

const FIXTURES = join(import.meta.dirname, "../../histories/fixtures");

/** The verdict with the model check's time, the one figure two runs of it may differ in, left out. */
function untimed(v: ReturnType<typeof verdict>): unknown {
  const model = v.results.stats.model as { elapsed_ms?: number };
  expect(typeof model.elapsed_ms).toBe("number");
  return { ...v, results: { ...v.results, stats: { ...v.results.stats, model: { ...model, elapsed_ms: 0 } } } };
}

async function bothWays(input: RunInput, options: CheckOptions): Promise<void> {
  const one = verdict(buildModel(input), options);
  // The model check in the second thread (a large run), or in this one (a larger run, for memory).
  for (const modelCheck of [true, false]) {
    const two = await verdictThread(modelCheck).verdict(buildModel(input), options);
    expect(untimed(two)).toEqual(untimed(one));
  }
}

/** The run with every owner renamed to one with a quote, a backslash and a non-ASCII letter. */
function oddOwners(input: RunInput): RunInput {
  const rename = (o: unknown): unknown => (typeof o === "string" ? `"${o}\\é` : o);
  const event = (e: HistoryEvent): HistoryEvent => (e.value && "owner" in e.value ? { ...e, value: { ...e.value, owner: rename(e.value.owner) } } : e);
  return { ...input, events: input.events.map(event), decisions: input.decisions?.map((d) => ({ ...d, owner: rename(d.owner) as string })) ?? null };
}

describe("the verdict on two threads", () => {
  const runs = ["good", "bad"].flatMap((kind) => readdirSync(join(FIXTURES, kind)).map((name) => join(FIXTURES, kind, name)));

  it("is the verdict on one, on every fixture, lease and strict", async () => {
    let witnesses = 0;
    for (const dir of runs) {
      const run = await loadRun(dir);
      for (const model of ["lease", "strict"] as const) await bothWays(run, { model });
      witnesses += verdict(buildModel(run), { model: "strict" }).results.anomalies["mutex-violation"]?.length ?? 0;
    }
    // The fixtures have holds' witnesses, which quote owners: the tokens were put back.
    expect(witnesses).toBeGreaterThan(0);
  }, 120_000);

  it("puts back owners whose names JSON escapes", async () => {
    for (const dir of runs.filter((d) => d.includes("/bad/"))) {
      const run = oddOwners(await loadRun(dir));
      await bothWays(run, { model: "strict" });
    }
  }, 120_000);
});
