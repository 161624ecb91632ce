// A large run's verdict is drawn on two threads (checker/analyze.ts verdictThread):
// the second checks the holds' spans and runs the model check on the model's
// shared columns, quoting owners by tokens the first turns back into names. It
// must give exactly the one-thread verdict: on every fixture, with the model
// check counted (strict) or not, and with owners whose names JSON must escape.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadRun } from "../../checker/index.ts";
import { verdict, verdictThread, type CheckOptions, type VerdictRequest } from "../../checker/analyze.ts";
import { checkHolds, type HoldCheck } from "../../checker/mutex.ts";
import { viewOf, withOwners } from "../../checker/shared-paired.ts";
import { startWorker } from "../../lib/index.ts";
import { pairRun, PairingBuilder, type RunInput } from "../../checker/paired.ts";
import { emptyFields, fieldsOf } from "../../store/event-fields.ts";
import type { HistoryEvent } from "../../store/events.ts";

const FIXTURES = join(import.meta.dirname, "../../histories/fixtures");

interface ThreadAnswer { holds: HoldCheck; model: unknown }

/** The verdict with the model check's time, the one figure two runs of it may differ in, left out. */
function untimed(v: ReturnType<typeof verdict>): unknown {
  const model = v.results.stats.model as { elapsed_ms?: number };
  expect(typeof model.elapsed_ms).toBe("number");
  return { ...v, results: { ...v.results, stats: { ...v.results.stats, model: { ...model, elapsed_ms: 0 } } } };
}

/**
 * The verdict on two threads as checkRun draws it: the second thread handed the
 * holds once the history is in (PairingBuilder.group), the decisions read after.
 */
async function begunEarly(input: RunInput, options: CheckOptions, modelCheck: boolean): Promise<ReturnType<typeof verdict>> {
  const thread = verdictThread(modelCheck);
  const b = new PairingBuilder(input.header);
  const fields = emptyFields();
  for (const e of input.events) b.event(fieldsOf(e, fields));
  thread.begin(b.group(), options);
  if (input.decisions) {
    b.noteResourceLog();
    for (const d of input.decisions) b.decision(d);
  }
  return thread.verdict(b.finish(), options);
}

async function bothWays(input: RunInput, options: CheckOptions): Promise<void> {
  const one = verdict(pairRun(input), options);
  // The model check in the second thread (a large run), or in this one (a larger run, for memory).
  for (const modelCheck of [true, false]) {
    const two = await verdictThread(modelCheck).verdict(pairRun(input), options);
    expect(untimed(two)).toEqual(untimed(one));
    expect(untimed(await begunEarly(input, options, modelCheck))).toEqual(untimed(one));
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
      witnesses += verdict(pairRun(run), { model: "strict" }).results.anomalies["mutex-violation"]?.length ?? 0;
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

describe("the verdict's second thread", () => {
  it("answers from the shared columns alone: its witnesses quote owners by token, which the names replace", async () => {
    // A fixture whose holds overlap, so the thread's witnesses quote owners.
    const runs = ["good", "bad"].flatMap((kind) => readdirSync(join(FIXTURES, kind)).map((name) => join(FIXTURES, kind, name)));
    let run: RunInput | null = null;
    for (const dir of runs) {
      const r = await loadRun(dir);
      if (checkHolds(pairRun(r)).violations.length > 0) { run = r; break; }
    }
    expect(run).not.toBeNull();
    const m = pairRun(run!);
    const worker = startWorker("checker/verdict-thread");
    try {
      const answer = new Promise<ThreadAnswer>((done, fail) => { worker.once("message", done); worker.once("error", fail); });
      worker.postMessage({ view: viewOf(m), modelCheck: false } satisfies VerdictRequest);
      const found = await answer;
      expect(found.model).toBeNull();
      const text = found.holds.violations.map((w) => w.explanation).join("\n");
      expect(text).toMatch(/\uE000\d+\uE001/);
      expect(withOwners(found.holds, m.owners.names)).toEqual(checkHolds(m));
    } finally {
      await worker.terminate();
    }
  }, 60_000);
});
