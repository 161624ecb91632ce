// The model check of the lock service: the search agrees with brute force on small
// random histories of a fenced mutex, and its findings reach results.json as
// strict-mutex-violation only with --model strict (options, run.json, the CLI).
import { execFile } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateRun } from "../../bench/checker-history.ts";
import { analyze, checkRun, loadRun, STRICT_MUTEX_VIOLATION } from "../../checker/index.ts";
import { pairRun } from "../../checker/paired.ts";
import { ACQUIRE, mutexHistories, mutexModel, type MutexHistory } from "../../checker/linearizable/fenced-mutex.ts";
import { search, tuning } from "../../checker/linearizable/wgl.ts";
import { History, writeRun } from "./build.ts";
import { build, historyArb } from "./search-histories.ts";
import { cliArgs, tempRunDir } from "../helpers.ts";

/** Every order of every subset holding all answered operations, against real time and the model. */
function bruteForce(h: MutexHistory): boolean {
  const model = mutexModel(h);
  const n = h.length;
  const before = (a: number, b: number): boolean => h.ret[a] >= 0 && h.ret[a] < h.call[b];
  const used = new Array<boolean>(n).fill(false);
  const go = (state: number): boolean => {
    // An order may stop once every answered operation is in it: the rest never happened.
    if (h.ret.every((r, i) => r < 0 || used[i])) return true;
    for (let i = 0; i < n; i++) {
      if (used[i]) continue;
      // Nothing may go first that an unused answered operation had to precede.
      if (used.some((u, j) => !u && j !== i && h.ret[j] >= 0 && before(j, i))) continue;
      const s = model.step(state, i);
      if (s < 0) continue;
      used[i] = true;
      if (go(s)) return true;
      used[i] = false;
    }
    return false;
  };
  return go(model.init);
}

describe("the search", () => {
  it("agrees with brute force on small fenced-mutex histories, with and without its memo, however the list is built", () => {
    fc.assert(
      fc.property(historyArb, fc.constantFrom(0, 1 << 20), fc.constantFrom(1, 2, 512), (x, maxMemo, batch) => {
        const h = build(x);
        tuning.batch = batch;
        try {
          const r = search(h, mutexModel(h), { deadline: Infinity, maxMemo });
          expect(r.kind).toBe(bruteForce(h) ? "linearizable" : "not-linearizable");
        } finally {
          tuning.batch = 512;
        }
      }),
      { numRuns: 1000 },
    );
  });
});

/** Two holds of "k": B acquires while A's lease certainly runs (a mutex violation, and a strict one). */
function overlapping(): History {
  const h = new History();
  h.acquire(0, "k", [0, 1], "A", 1, 1000);
  h.acquire(1, "k", [10, 11], "B", 2, 1000);
  return h;
}

/** A's 5 ms lease runs out before B acquires: fine for a lease, not for a strict mutex (A releases only later). */
function expired(): History {
  const h = new History();
  h.acquire(0, "k", [0, 1], "A", 1, 5);
  h.acquire(1, "k", [10, 11], "B", 2, 1000);
  h.release(1, "k", [12, 13], "B", 2);
  h.release(0, "k", [20, 21], "A", 1);
  return h;
}

const input = (h: History) => ({ header: h.header, events: h.build(), decisions: null });

describe("each key's history for the search (mutexHistories)", () => {
  it("holds the key's own lock operations in row order, tied to its own holds, on a run of many keys", async () => {
    const dir = tempRunDir("fc-mutexh-");
    try {
      generateRun(dir, { events: 20_000, seed: 6, keys: 50, clients: 60, workers: 3, fencing: true, renew: true });
      const m = pairRun(await loadRun(dir));
      const hs = mutexHistories(m);
      expect(hs.length).toBe(m.holdsByKey.size);
      let ops = 0;
      for (const h of hs) {
        const key = m.keys.names.indexOf(h.key);
        const list = m.holdsByKey.get(h.key)!;
        expect(Array.from(h.holds)).toEqual(Array.from(list.items.subarray(0, list.length)));
        expect(Array.from(h.fences)).toEqual(Array.from(h.holds, (id) => m.holds.fence[id]));
        for (let i = 0; i < h.length; i++) {
          const r = h.row[i];
          expect(m.ops.key[r]).toBe(key);
          if (i > 0) expect(r).toBeGreaterThan(h.row[i - 1]);
          expect(m.ops.hold[r]).toBe(h.holds[h.hold[i]]);
          expect(h.call[i]).toBe(m.ops.invoke[r]);
        }
        h.acquireOf.forEach((i, j) => {
          expect(h.kind[i]).toBe(ACQUIRE);
          expect(h.hold[i]).toBe(j);
        });
        ops += h.length;
      }
      expect(ops).toBeGreaterThan(1000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("strict-mutex-violation", () => {
  it("is reported in stats.model only, unless the model is strict", () => {
    const lease = analyze(input(expired())).results;
    expect(lease.valid).toBe(true);
    expect(lease.anomaly_types).toEqual([]);
    expect(lease.stats.model).toMatchObject({ model: "fenced-mutex", result: "not-linearizable", counted: false, keys: { not_linearizable: 1 } });

    const strict = analyze(input(expired()), { model: "strict" }).results;
    expect(strict.valid).toBe(false);
    expect(strict.anomaly_types).toEqual([STRICT_MUTEX_VIOLATION]);
    const [w] = strict.anomalies[STRICT_MUTEX_VIOLATION];
    expect(w.key).toBe("k");
    // B's acquire could not take effect: A held the lock, and A's release came later.
    expect(w.events).toEqual(expect.arrayContaining([0, 1, 2, 3, 6]));
    expect(w.explanation).toMatch(/Acquire #2 .*held by the hold of acquire #0 .*release #6 was invoked only at 20\.000 ms.*had run out/);
  });

  it("is not found where a mutex explains the history", () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1, 1000);
    h.release(0, "k", [2, 6], "A", 1);
    h.acquire(1, "k", [3, 8], "B", 2, 1000);
    h.op(2, "acquire", "k", [4, 5], { ttl_ms: 1000 }, "fail", undefined, "busy");
    h.release(1, "k", [9], "B", 2, "info");
    h.acquire(3, "k", [10, 11], "C", 3, 1000);
    const r = analyze(input(h), { model: "strict" }).results;
    expect(r.valid).toBe(true);
    expect(r.stats.model).toMatchObject({ result: "linearizable", left_out: { failed: 1 } });
  });

  it("a violation of the lease is one of the strict mutex too", () => {
    const r = analyze(input(overlapping()), { model: "strict" }).results;
    expect(r.anomaly_types).toEqual(["mutex-violation", STRICT_MUTEX_VIOLATION]);
  });

  it("makes the verdict unknown when the budget runs out, under strict only", () => {
    const h = new History();
    for (let i = 0; i < 3000; i++) {
      h.acquire(i, "k", [i * 10, i * 10 + 1], `h${i}`, i + 1, 1);
      h.release(i, "k", [i * 10 + 2, i * 10 + 3], `h${i}`, i + 1);
    }
    const strict = analyze(input(h), { model: "strict", modelBudgetMs: 0 }).results;
    expect(strict.stats.model).toMatchObject({ result: "unknown" });
    expect(strict.valid).toBe("unknown");
    expect(analyze(input(h), { modelBudgetMs: 0 }).results.valid).toBe(true);
  });
});

const ROOT = resolve(import.meta.dirname, "../..");

describe("--model strict", () => {
  it("is read from run.json, and --model on check overrides it", { timeout: 60_000 }, async () => {
    const dir = writeRun(expired());
    expect((await checkRun(dir)).results.valid).toBe(true);
    writeFileSync(join(dir, "run.json"), JSON.stringify({ options: { model: "strict" } }));
    expect((await checkRun(dir)).results.anomaly_types).toEqual([STRICT_MUTEX_VIOLATION]);
    expect((await checkRun(dir, { model: "lease" })).results.valid).toBe(true);

    const code = await new Promise<number>((done) =>
      execFile(process.execPath, [...cliArgs("check"), "--model", "lease", dir], { cwd: ROOT }, (err) => done(err ? Number(err.code) : 0)));
    expect(code).toBe(0);
    writeFileSync(join(dir, "run.json"), JSON.stringify({ options: {} }));
    const strict = await new Promise<number>((done) =>
      execFile(process.execPath, [...cliArgs("check"), "--model", "strict", dir], { cwd: ROOT }, (err) => done(err ? Number(err.code) : 0)));
    expect(strict).toBe(1);
    expect(JSON.parse(readFileSync(join(dir, "results.json"), "utf8")).anomaly_types).toEqual([STRICT_MUTEX_VIOLATION]);
  });
});
