// The checker fuzz's generator (test/checker/fuzz/) is held to what the fuzz needs
// of it: runs the format allows (the fuzz is about verdicts, not bad input), each
// situation of the contract's amended rules made often enough to be checked on
// every npm test, and valid and invalid runs both common. Fixed seeds: these are
// facts about the generator, not a search.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkRun, loadRun } from "../../checker/index.ts";
import type { HistoryEvent, ResourceDecision } from "../../store/events.ts";
import { decisionProblem } from "../../store/reader.ts";
import { execute, type Execution } from "./fuzz/execute.ts";
import { planArb, type Plan } from "./fuzz/plan.ts";
import { tempRun } from "./fuzz/run-dir.ts";
import { situationsOf, type Situation } from "./fuzz/situations.ts";

const plans = (n: number, seed: number): Plan[] => fc.sample(planArb, { numRuns: n, seed });

/** Where a value holds undefined, which JSON.stringify drops without a word: a field the line then lacks. */
function undefinedIn(v: unknown, at: string): string[] {
  if (v === undefined) return [at];
  if (typeof v !== "object" || v === null) return [];
  return Object.entries(v).flatMap(([k, x]) => undefinedIn(x, `${at}.${k}`));
}

/** What in an execution breaks the format's own rules (docs/history-format.md); empty when nothing does. */
function formatProblems(plan: Plan, x: Execution): string[] {
  const problems: string[] = [];
  for (const e of x.events) problems.push(...undefinedIn(e, `event ${e.index}`).map((w) => `${w} is undefined`));
  for (const d of x.decisions ?? []) {
    problems.push(...undefinedIn(d, `seq ${d.seq}`).map((w) => `${w} is undefined`));
    const wrong = decisionProblem(d);
    if (wrong) problems.push(`seq ${d.seq}: ${wrong}`);
  }
  const open = new Map<number, HistoryEvent>();
  const retired = new Set<number>();
  const owners = new Map<string, number>();
  let lastTime = -1;
  x.events.forEach((e, i) => {
    if (e.index !== i) problems.push(`event ${i} has index ${e.index}`);
    if (e.time < lastTime) problems.push(`event ${i} goes back in time`);
    lastTime = e.time;
    if (e.process === "nemesis") {
      if (e.type !== "info" || e.key !== undefined) problems.push(`nemesis event ${i} is not an info without a key`);
      return;
    }
    if (e.type === "notice") {
      if (plan.format !== 2) problems.push(`notice ${i} in a format 1 history`);
      return;
    }
    const p = e.process;
    if (retired.has(p)) problems.push(`process ${p} acts at ${i} after its info`);
    if (e.type === "invoke") {
      if (open.has(p)) problems.push(`process ${p} invokes at ${i} with an operation outstanding`);
      if (e.key === undefined) problems.push(`invoke ${i} has no key`);
      open.set(p, e);
      return;
    }
    const inv = open.get(p);
    if (!inv || inv.f !== e.f || inv.key !== e.key) problems.push(`completion ${i} of process ${p} matches no open invoke`);
    open.delete(p);
    if (e.type === "info") retired.add(p);
    if (e.type === "ok" && e.f === "acquire" && (inv?.value?.depth ?? 1) === 1) {
      const k = `${e.key}\u0000${e.value?.owner}`;
      if (owners.has(k) && !plan.defects.includes("owner-reuse") && !plan.defects.includes("cancel-leak")) problems.push(`owner ${e.value?.owner} given twice on ${e.key}`);
      owners.set(k, i);
    }
  });
  if (x.decisions) problems.push(...decisionProblems(plan, x.events, x.decisions));
  return problems;
}

function decisionProblems(plan: Plan, events: HistoryEvent[], decisions: ResourceDecision[]): string[] {
  const problems: string[] = [];
  for (const d of decisions) {
    if (plan.format === 1 && (d.accepted === null || d.order !== undefined)) problems.push(`seq ${d.seq}: a committed decision's fields in format 1`);
    if (d.accepted === null && (d.order !== null || d.max_before !== null)) problems.push(`seq ${d.seq}: accepted null with an order or max_before`);
    if (plan.resource === "committed" && d.order === undefined) problems.push(`seq ${d.seq}: a committed decision without order`);
    // Decided after the operation that sent it was invoked, by its process, owner and key.
    const sent = events.some((e) => e.type === "invoke" && e.process === d.process && e.key === d.key && e.f === d.op && e.time < d.time &&
      (e.value?.owner === d.owner || (d.op === "read" && e.value?.owner === undefined)));
    if (!sent) problems.push(`seq ${d.seq}: no operation of process ${d.process} sent it before ${d.time}`);
  }
  if (plan.resource === "committed") {
    const seqs = decisions.map((d) => d.seq);
    if (seqs.some((s, i) => s !== i + 1)) problems.push(`committed decisions not numbered 1, 2, ... in file order`);
  }
  return problems;
}

describe("the fuzz generator", () => {
  it("makes only histories and logs the format allows", () => {
    const found: string[] = [];
    for (const [i, plan] of plans(2000, 20261130).entries()) for (const p of formatProblems(plan, execute(plan))) found.push(`case ${i}: ${p}`);
    expect(found.slice(0, 20)).toEqual([]);
  });

  it("writes run directories the reader takes, damaged files included", async () => {
    const found: string[] = [];
    for (const [i, plan] of plans(250, 20261129).entries()) {
      const run = tempRun(plan, `case-${i}`);
      try {
        for (const p of formatProblems(plan, run.execution)) found.push(`case ${i}: ${p}`);
        const loaded = await loadRun(run.dir);
        // (The reader keeps notices apart.)
        expect(loaded.events.length).toBe(run.execution.events.filter((e) => e.type !== "notice").length);
        if (plan.damage === "cut-history" || plan.damage === "killed" || plan.damage === "cut-resource")
          expect(loaded.warnings.some((w) => w.includes("cut short")), `case ${i} (${plan.damage}): ${loaded.warnings.join("; ")}`).toBe(true);
      } catch (err) {
        found.push(`case ${i}: ${(err as Error).message}`);
      } finally {
        run.remove();
      }
    }
    expect(found.slice(0, 20)).toEqual([]);
  });

  it("makes each situation of the contract's amended rules, and the ground around them", () => {
    const counts = new Map<Situation, number>();
    const kinds = new Set<string>();
    for (const plan of plans(1000, 29112026)) {
      const x = execute(plan);
      for (const s of situationsOf(x.header, x.events, x.decisions)) counts.set(s, (counts.get(s) ?? 0) + 1);
      kinds.add(`${plan.format}/${plan.lock}/${plan.resource}/${plan.workload}`);
    }
    const at = (s: Situation): number => counts.get(s) ?? 0;
    // (a) .. (d) of situations.ts: each in about one case in fifty or more.
    expect({
      "null-ok-stale": at("null-ok-stale") >= 8,
      "late-renew-after-grant": at("late-renew-after-grant") >= 15,
      "reentry-without-outer": at("reentry-without-outer") >= 15,
      "order-not-line-order": at("order-not-line-order") >= 15,
    }, JSON.stringify(Object.fromEntries(counts))).toEqual({ "null-ok-stale": true, "late-renew-after-grant": true, "reentry-without-outer": true, "order-not-line-order": true });
    for (const s of ["reentry-of-another-process", "reentry-with-no-outer-hold", "reentry-after-lease", "late-renew", "early-renew", "lease-ran-out-in-hold", "reentry", "rw-read-and-write", "semaphore-shared", "cancelled", "cancel-unknown", "lost-notice", "null-fence", "accepted-null", "info", "open-at-end", "nemesis"] as const)
      expect([s, at(s) >= 10]).toEqual([s, true]);
    for (const k of ["1/mutex/memory/fenced-write", "1/mutex/none/counter", "2/mutex/committed/fenced-write", "2/reentrant/memory/fenced-write", "2/rw/memory/fenced-write", "2/semaphore/memory/fenced-write"])
      expect([k, kinds.has(k)]).toEqual([k, true]);
  });

  it("makes adapter runs whose programs broke the protocol with an operation outstanding (its info) and while idle (no line), and ones that only timed out", () => {
    const seen = { outstanding: 0, idle: 0, timeoutOnly: 0 };
    for (const plan of plans(1000, 29112026)) {
      const x = execute(plan);
      const infos = x.events.filter((e) => e.type === "info" && (e.error === "adapter-bad-line" || e.error === "adapter-exited"));
      // Every info a protocol error ended has its line, at its time and process; the others are strays.
      for (const e of infos) expect(x.protocolErrors.some((p) => p.time === e.time && p.process === e.process && p.code === e.error)).toBe(true);
      if (infos.length) seen.outstanding++;
      if (x.protocolErrors.length > infos.length) seen.idle++;
      if (plan.adapter === "timeout" && x.events.some((e) => e.error === "adapter-timeout")) seen.timeoutOnly++;
      if (plan.adapter === "none" || plan.adapter === "timeout") expect(x.protocolErrors).toEqual([]);
    }
    expect(seen.outstanding, JSON.stringify(seen)).toBeGreaterThanOrEqual(10);
    expect(seen.idle, JSON.stringify(seen)).toBeGreaterThanOrEqual(10);
    expect(seen.timeoutOnly, JSON.stringify(seen)).toBeGreaterThanOrEqual(10);
  });

  it("makes valid runs and invalid ones, both often", async () => {
    const verdicts = { valid: 0, invalid: 0, unknown: 0 };
    const sample = plans(150, 112026);
    for (const plan of sample) {
      const run = tempRun(plan);
      try {
        const { results } = await checkRun(run.dir, { liveness: plan.liveness });
        verdicts[results.valid === true ? "valid" : results.valid === false ? "invalid" : "unknown"]++;
      } finally {
        run.remove();
      }
    }
    expect(verdicts.valid, JSON.stringify(verdicts)).toBeGreaterThan(sample.length * 0.3);
    expect(verdicts.invalid, JSON.stringify(verdicts)).toBeGreaterThan(sample.length * 0.15);
  });
});
