// Properties of the checker over generated runs (fast-check): runs of a correct
// lock service and resource are valid, with or without the resource log; one
// anomaly of each type of docs/history-format.md planted after such a run is found,
// with a witness naming the planted events; and a history with one broken line is
// refused with that line's number, never checked.
import fc from "fast-check";
import { execFile } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { analyze, checkRun, type RunInput } from "../../checker/index.ts";
import { BadInput } from "../../lib/index.ts";
import type { Results, Witness } from "../../store/events.ts";
import { tempDir } from "./build.ts";
import { ndjson, PLANTED_KEY, Planter, simOptions, simulated } from "./sim.ts";
import { cliArgs } from "../helpers.ts";

// A thousand cases where the variety of the generated runs is what is tested: no
// correct run is flagged, and no run with a broken line is checked. A planted
// anomaly sits on a key of its own after the run, and little varies in it (a fence,
// a gap of 1 to 3 ms, the resource log or not): 250 cases meet each of its shapes
// many times over, after runs of 250 shapes.
const RUNS = { numRuns: 1000 };
const PLANTED_RUNS = { numRuns: 250 };

describe("valid runs", () => {
  it("a correct lock service and resource give no anomaly, with the resource log or without", () => {
    fc.assert(
      fc.property(simOptions, (o) => {
        const run = simulated(o);
        for (const decisions of [run.decisions, null]) {
          const { results } = analyze({ ...run, decisions });
          expect(results.anomaly_types).toEqual([]);
          expect(results.valid).toBe(true);
        }
      }),
      RUNS,
    );
  });
});

interface Planted {
  input: RunInput;
  events: number[];
  seqs: number[];
}

/** The run is invalid with `type`, and one witness of it names every planted event (and decision, when logged). */
function expectFound(results: Results, type: string, planted: Planted): void {
  expect(results.valid).toBe(false);
  expect(results.anomaly_types).toContain(type);
  const named = (w: Witness): boolean =>
    w.key === PLANTED_KEY && planted.events.every((i) => w.events?.includes(i)) &&
    (planted.input.decisions === null || planted.seqs.every((s) => w.seqs?.includes(s)));
  expect(results.anomalies[type].some(named), JSON.stringify(results.anomalies[type])).toBe(true);
}

const fence = fc.integer({ min: 1, max: 1000 });
const step = fc.integer({ min: 1, max: 3 });

/** A property: a valid base run, an anomaly planted after it, with or without the resource log. */
function planting<P>(type: string, params: fc.Arbitrary<P>, plant: (p: Planter, params: P, withResource: boolean) => Planted, counter = false): void {
  it(`${type} is found with a witness that names the planted events`, () => {
    const base = counter ? simOptions.map((o) => ({ ...o, workload: "counter" as const, ttlMs: 60_000, nemesis: false })) : simOptions;
    fc.assert(
      fc.property(base, params, fc.boolean(), (o, p, withResource) => {
        const planted = plant(new Planter(simulated(o)), p, withResource);
        expectFound(analyze(planted.input).results, type, planted);
      }),
      PLANTED_RUNS,
    );
  });
}

describe("planted anomalies", () => {
  // A's lease (1 ms) is over when B acquires, so only the writes are at fault.
  planting("stale-write-accepted", fc.tuple(fence, step), (p, [fa, d], res) => {
    const [a, b] = [p.newProcess(), p.newProcess()];
    p.acquire(a, "A", fa, 1);
    p.wait(2);
    p.acquire(b, "B", fa + d, 1000);
    const [bi, bo, bs] = p.write(b, "B", fa + d, "b", true, null);
    const [ai, ao, as] = p.write(a, "A", fa, "a", true, fa + d);
    return { input: p.run(res), events: [bi, bo, ai, ao], seqs: [bs, as] };
  });

  // No fences, so no write is stale: only the order A, B, A is wrong.
  planting("interleaved-writers", step, (p, gap, res) => {
    const [a, b] = [p.newProcess(), p.newProcess()];
    p.acquire(a, "A", null, 1);
    const [a1i, a1o, a1s] = p.write(a, "A", null, 1, true, null, false);
    p.wait(gap + 1);
    p.acquire(b, "B", null, 1000);
    const [bi, bo, bs] = p.write(b, "B", null, 2, true, null, false);
    const [a2i, a2o, a2s] = p.write(a, "A", null, 3, true, null, false);
    return { input: p.run(res), events: [a1i, a1o, bi, bo, a2i, a2o], seqs: [a1s, bs, a2s] };
  });

  // Refused with no fence before it, or with the fence its own hold's fenced read
  // set, which a write may equal (resource/fences.ts).
  planting("false-rejection", fc.tuple(fence, fc.boolean()), (p, [f, afterRead], res) => {
    const a = p.newProcess();
    p.acquire(a, "A", f, 1000);
    const [ri, ro, rs] = afterRead ? p.read(a, "A", f, null, true, null) : [];
    const [wi, wo, ws] = p.write(a, "A", f, "a", false, afterRead ? f : null);
    p.release(a, "A", f);
    return afterRead
      ? { input: p.run(res), events: [ri, ro, wi, wo], seqs: [rs, ws] }
      : { input: p.run(res), events: [wi, wo], seqs: [ws] };
  });

  planting("duplicate-fence", fc.tuple(fence, step), (p, [f, gap], res) => {
    const [a, b] = [p.newProcess(), p.newProcess()];
    const [ai, ao] = p.acquire(a, "A", f, 1000);
    p.release(a, "A", f);
    p.wait(gap);
    const [bi, bo] = p.acquire(b, "B", f, 1000);
    p.release(b, "B", f);
    return { input: p.run(res), events: [ai, ao, bi, bo], seqs: [] };
  });

  planting("fence-regression", fc.tuple(fence, step), (p, [f, d], res) => {
    const [a, b] = [p.newProcess(), p.newProcess()];
    const [ai, ao] = p.acquire(a, "A", f + d, 1000);
    p.release(a, "A", f + d);
    const [bi, bo] = p.acquire(b, "B", f, 1000);
    p.release(b, "B", f);
    return { input: p.run(res), events: [ai, ao, bi, bo], seqs: [] };
  });

  // The second write should have been 2: it lost the first one's increment.
  planting("lost-update", fc.integer({ min: 3, max: 50 }).chain((v) => fc.constantFrom(1, v)), (p, wrong, res) => {
    const [a, b] = [p.newProcess(), p.newProcess()];
    p.acquire(a, "A", 1, 60_000);
    const [a1, a2, as] = p.write(a, "A", 1, 1, true, null);
    p.release(a, "A", 1);
    p.acquire(b, "B", 2, 60_000);
    const [bi, bo, bs] = p.write(b, "B", 2, wrong, true, 1);
    p.release(b, "B", 2);
    return { input: p.run(res), events: res ? [a1, a2, bi, bo] : [bi, bo], seqs: [as, bs] };
  }, true);

  // Both leases certainly run at once: B acquires 2 ms into A's 1000 ms lease.
  planting("mutex-violation", fc.tuple(fence, step), (p, [f, d], res) => {
    const [a, b] = [p.newProcess(), p.newProcess()];
    const [ai, ao] = p.acquire(a, "A", f, 1000);
    const [bi, bo] = p.acquire(b, "B", f + d, 1000);
    return { input: p.run(res), events: [ai, ao, bi, bo], seqs: [] };
  });
});

// The anomalies lock libraries' users report (issue 13): a lock handed over already
// spent by its client's own count, and a hold that went on after it was lost.
describe("planted library anomalies", () => {
  // The client itself says nothing was left of the lease when the acquire returned.
  planting("expired-on-arrival", fc.tuple(fence, fc.integer({ min: -5000, max: 0 })), (p, [f, validity], res) => {
    const a = p.newProcess();
    const [ai, ao] = p.acquire(a, "A", f, 1000, { validity_ms: validity });
    p.release(a, "A", f);
    return { input: p.run(res), events: [ai, ao], seqs: [] };
  });

  // A's 1 ms lease is over; B is granted the key; A's renew then says ok.
  planting("lost-lock-unnoticed", fc.tuple(fence, step), (p, [f, d], res) => {
    const [a, b] = [p.newProcess(), p.newProcess()];
    const [ai, ao] = p.acquire(a, "A", f, 1);
    p.wait(d + 1);
    const [bi, bo] = p.acquire(b, "B", f + d, 1000);
    const [ri, ro] = p.renew(a, "A", f, 1000);
    return { input: p.run(res), events: [ai, ao, bi, bo, ri, ro], seqs: [] };
  });

  it("a client that reports time left, and renews before anyone else is granted the key, is clean", () => {
    fc.assert(
      fc.property(simOptions, fence, fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 4 }), fc.boolean(), (o, f, validity, renews, withResource) => {
        const p = new Planter(simulated(o));
        const [a, b] = [p.newProcess(), p.newProcess()];
        p.acquire(a, "A", f, 1000, { validity_ms: validity });
        for (let i = 0; i < renews; i++) p.renew(a, "A", f, 1000);
        p.write(a, "A", f, "a", true, null);
        p.release(a, "A", f);
        // B's grant comes after A let go; A's renews all came before it.
        p.acquire(b, "B", f + 1, 1000, { validity_ms: validity });
        p.renew(b, "B", f + 1, 1000);
        p.release(b, "B", f + 1);
        const { results } = analyze(p.run(withResource));
        expect(results.anomaly_types).toEqual([]);
      }),
      PLANTED_RUNS,
    );
  });
});

// Fenced reads are judged by the resource's rule (resource/fences.ts) and counted in
// stats, not as anomaly types: holds that each read and then write with their own
// fence are valid, and a stale holder's fenced read is counted whether the resource
// refused it or (wrongly) accepted it, with a witness that names it.
describe("fenced reads", () => {
  it("reads then writes with each hold's fence are valid; a stale read is counted and witnessed", () => {
    fc.assert(
      fc.property(simOptions, fc.integer({ min: 1, max: 4 }), fence, fc.boolean(), fc.boolean(), (o, holds, f0, staleAccepted, withResource) => {
        const p = new Planter(simulated(o));
        const stale = p.newProcess();
        p.acquire(stale, "S", f0, 1);
        p.wait(2);
        let max: number | null = null;
        for (let i = 0; i < holds; i++) {
          const a = p.newProcess();
          const f = f0 + 1 + i;
          p.acquire(a, `H${i}`, f, 1000);
          p.read(a, `H${i}`, f, i, true, max);
          max = f;
          p.write(a, `H${i}`, f, i + 1, true, max);
          p.release(a, `H${i}`, f);
        }
        const [ri, ro, rs] = p.read(stale, "S", f0, holds, staleAccepted, max);
        const { results } = analyze(p.run(withResource));
        expect(results.anomaly_types).toEqual([]);
        const reads = results.stats.fenced_reads as { accepted: number; stale_accepted: number; witnesses: Witness[] };
        expect(results.stats.stale_reads_refused).toBe(staleAccepted ? 0 : 1);
        expect(reads.accepted).toBe(holds + (staleAccepted ? 1 : 0));
        expect(reads.stale_accepted).toBe(staleAccepted ? 1 : 0);
        if (staleAccepted) {
          const w = reads.witnesses[0];
          expect(w.key).toBe(PLANTED_KEY);
          expect(w.events).toEqual(expect.arrayContaining([ri, ro]));
          if (withResource) expect(w.seqs).toContain(rs);
        }
      }),
      PLANTED_RUNS,
    );
  });
});

type Fuzz =
  | { kind: "wrong-type"; field: string; value: unknown }
  | { kind: "missing"; field: string }
  | { kind: "unknown-f" }
  | { kind: "no-invoke" }
  | { kind: "two-completions" };

const WRONG: [string, unknown][] = [["index", "7"], ["index", -1], ["time", "soon"], ["time", 1.5], ["process", "p1"], ["process", 2.5], ["type", "done"], ["f", 42], ["key", 7], ["value", [1]], ["error", 5]];
const REQUIRED = ["index", "time", "process", "type", "f"];

const fuzz: fc.Arbitrary<Fuzz> = fc.oneof(
  fc.constantFrom(...WRONG).map(([field, value]): Fuzz => ({ kind: "wrong-type", field, value })),
  fc.constantFrom(...REQUIRED).map((field): Fuzz => ({ kind: "missing", field })),
  fc.constant<Fuzz>({ kind: "unknown-f" }),
  fc.constant<Fuzz>({ kind: "no-invoke" }),
  fc.constant<Fuzz>({ kind: "two-completions" }),
);

/** The file with one broken line, and the line the checker must name. */
function broken(lines: string[], f: Fuzz, pick: number): { text: string; line: number } {
  const events = lines.map((l, i) => (i === 0 ? null : (JSON.parse(l) as Record<string, unknown>)));
  const at = (ok: (e: Record<string, unknown>) => boolean): number => {
    const fits = events.flatMap((e, i) => (e && ok(e) ? [i] : []));
    return fits[pick % fits.length];
  };
  const out = [...lines];
  const client = (e: Record<string, unknown>): boolean => e.process !== "nemesis";
  switch (f.kind) {
    case "wrong-type": {
      const i = at(() => true);
      out[i] = JSON.stringify({ ...events[i], [f.field]: f.value });
      return { text: out.join("\n") + "\n", line: i + 1 };
    }
    case "missing": {
      const i = at(() => true);
      const { [f.field]: _gone, ...rest } = events[i]!;
      out[i] = JSON.stringify(rest);
      return { text: out.join("\n") + "\n", line: i + 1 };
    }
    case "unknown-f": {
      const i = at(client);
      out[i] = JSON.stringify({ ...events[i], f: "frobnicate" });
      return { text: out.join("\n") + "\n", line: i + 1 };
    }
    case "no-invoke": {
      // An invoke that was completed: without it, its completion completes nothing.
      const done = at((e) => client(e) && e.type !== "invoke");
      const d = events[done]!;
      let invoke = done - 1;
      while (events[invoke]!.process !== d.process) invoke--;
      out.splice(invoke, 1);
      return { text: out.join("\n") + "\n", line: done };
    }
    case "two-completions": {
      const done = at((e) => client(e) && e.type !== "invoke");
      out.splice(done + 1, 0, JSON.stringify({ ...events[done], index: lines.length + 5 }));
      return { text: out.join("\n") + "\n", line: done + 2 };
    }
  }
}

describe("broken lines", () => {
  const dir = tempDir();

  it("through the CLI: exit 254 and the line, nothing written", { timeout: 60_000 }, async () => {
    const run = simulated({ seed: 7, events: 60, keys: 2, clients: 3, workers: 2, fencing: true });
    const { text, line } = broken(ndjson(run), { kind: "two-completions" }, 3);
    const runDir = tempDir();
    writeFileSync(join(runDir, "history.ndjson"), text);
    const { code, stderr } = await new Promise<{ code: number; stderr: string }>((done) =>
      execFile(process.execPath, [...cliArgs("check"), runDir], { cwd: resolve(import.meta.dirname, "../..") }, (err, _out, stderr) =>
        done({ code: err ? Number(err.code) : 0, stderr })));
    expect(code).toBe(254);
    expect(stderr).toContain(`history.ndjson line ${line}: second completion`);
    expect(existsSync(join(runDir, "results.json"))).toBe(false);
  });
  const nonTrivial = simOptions.filter((o) => o.events >= 8);

  it("give BadInput naming the line, never a verdict or a crash", async () => {
    await fc.assert(
      fc.asyncProperty(nonTrivial, fuzz, fc.nat(), async (o, f, pick) => {
        const { text, line } = broken(ndjson(simulated(o)), f, pick);
        writeFileSync(join(dir, "history.ndjson"), text);
        const err = await checkRun(dir).then(() => null, (e: unknown) => e);
        expect(err).toBeInstanceOf(BadInput);
        expect((err as Error).message).toMatch(new RegExp(`^history\\.ndjson line ${line}: `));
      }),
      RUNS,
    );
  });
});
