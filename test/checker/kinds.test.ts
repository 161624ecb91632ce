// Format 2's lock kinds on hand-written histories: each analysis on a clean
// fixture (nothing found) and a violating one (found, with the events it rests
// on), the resource's rule per kind, and stuck-lock as a liveness finding.
import { describe, it, expect } from "vitest";
import { checkRun } from "../../checker/index.ts";
import { FencedStore } from "../../resource/fences.ts";
import { decision, History, writeRun } from "./build.ts";

const NS = 1e6;

/** An acquire of a kind: `value` fields go into the invoke and the ok. */
function acquireKind(h: History, p: number, key: string, at: [number, number], owner: string, fence: number | null, fields: Record<string, unknown>, ttl = 1000) {
  return h.op(p, "acquire", key, at, { ttl_ms: ttl, ...fields }, "ok", { owner, fence, ttl_ms: ttl, ...fields });
}

describe("rw-violation", () => {
  const run = (secondMode: "read" | "write") => {
    const h = new History({ format: 2, lock: "rw", client: "x" });
    acquireKind(h, 1, "k", [0, 10], "r1", 1, { mode: "read" });
    const second = acquireKind(h, 2, "k", [20, 30], "o2", 2, { mode: secondMode });
    h.op(1, "release", "k", [500, 510], { owner: "r1", fence: 1 }, "ok", { released: true });
    h.op(2, "release", "k", [600, 610], { owner: "o2", fence: 2 }, "ok", { released: true });
    return { h, second };
  };

  it("two readers at once are what an rw lock is for: valid, no lease overlap counted", async () => {
    const { results } = await checkRun(writeRun(run("read").h));
    expect(results.valid).toBe(true);
    expect(results.anomaly_types).toEqual([]);
    expect(results.stats.lease_overlaps).toBe(0);
  });

  it("a writer granted while a reader certainly holds: rw-violation with both acquires, not a mutex-violation", async () => {
    const { h, second } = run("write");
    const { results } = await checkRun(writeRun(h));
    expect(results.anomaly_types).toEqual(["rw-violation"]);
    const w = results.anomalies["rw-violation"][0];
    expect(w.events).toContain(second.invoke.index);
    expect(w.explanation).toMatch(/a read hold and a write hold were certainly valid at once/);
    // Not a lease's fault either: the model check of an rw lock finds it too, counted only under --model strict.
    expect(results.stats.model).toMatchObject({ model: "fenced-rw-lock", result: "not-linearizable", counted: false });
  });
});

describe("semaphore-overflow", () => {
  const run = (permits: number) => {
    const h = new History({ format: 2, lock: "semaphore", permits, client: "x" });
    const third = [0, 1, 2].map((i) => acquireKind(h, i, "k", [i * 10, i * 10 + 5], `o${i}`, i + 1, {}))[2];
    for (const i of [0, 1, 2]) h.release(i, "k", [500 + i, 505 + i], `o${i}`, i + 1);
    return { h, third };
  };

  it("three holders of a three-permit semaphore: valid", async () => {
    const { results } = await checkRun(writeRun(run(3).h));
    expect(results.valid).toBe(true);
  });

  it("three holders of a two-permit semaphore: the third is named with the two it joined", async () => {
    const { h, third } = run(2);
    const { results } = await checkRun(writeRun(h));
    expect(results.anomaly_types).toEqual(["semaphore-overflow"]);
    const w = results.anomalies["semaphore-overflow"][0];
    expect(w.events).toContain(third.invoke.index);
    expect(w.explanation).toMatch(/3 holds were certainly valid at once .* the semaphore has 2 permits/);
  });
});

describe("reentrancy-violation", () => {
  const run = (innerFrees: boolean, reentryFence = 1) => {
    const h = new History({ format: 2, lock: "reentrant", fence_on_reentry: "same", client: "x" });
    acquireKind(h, 1, "k", [0, 10], "a", 1, { depth: 1 });
    acquireKind(h, 1, "k", [20, 25], "a", reentryFence, { depth: 2 });
    const inner = h.op(1, "release", "k", [30, 35], { owner: "a", fence: reentryFence, depth: 2 }, "ok", { released: true });
    // Another owner, granted while a's count is 1: only a broken lock lets it in.
    const other = innerFrees ? acquireKind(h, 2, "k", [40, 50], "b", 2, { depth: 1 }) : null;
    h.op(1, "release", "k", [300, 305], { owner: "a", fence: 1, depth: 1 }, "ok", { released: true });
    if (other) h.op(2, "release", "k", [400, 405], { owner: "b", fence: 2, depth: 1 }, "ok", { released: true });
    return { h, inner, other };
  };

  it("a re-entry and its release inside the outer hold: valid, one hold, no duplicate owner", async () => {
    const { results } = await checkRun(writeRun(run(false).h));
    expect(results.valid).toBe(true);
    expect(results.stats.unknown_reasons).toEqual([]);
  });

  it("another owner granted after the inner release: reentrancy-violation naming the inner release, and no mutex-violation besides", async () => {
    const { h, inner, other } = run(true);
    const { results } = await checkRun(writeRun(h));
    expect(results.anomaly_types).toEqual(["reentrancy-violation"]);
    const w = results.anomalies["reentrancy-violation"][0];
    expect(w.events).toEqual(expect.arrayContaining([inner.invoke.index, other!.invoke.index]));
    expect(w.explanation).toMatch(/The inner release freed the outer hold/);
  });

  // The amended rule: a re-entry is rightly granted only to the process holding the
  // hold at the depth below while it is certainly valid.
  const reentry = (o: { by: number; at: [number, number]; ttl?: number; refreshAt?: [number, number]; depth?: number; outer?: boolean }) => {
    const h = new History({ format: 2, lock: "reentrant", fence_on_reentry: "same", client: "x" });
    if (o.outer !== false) acquireKind(h, 1, "k", [0, 10], "a", 1, { depth: 1 }, o.ttl);
    if (o.refreshAt) acquireKind(h, 1, "k", o.refreshAt, "a", 1, { depth: 2 }, o.ttl);
    acquireKind(h, o.by, "k", o.at, "a", 1, { depth: o.depth ?? 2 }, o.ttl);
    return h;
  };
  const types = async (h: History): Promise<string[]> => (await checkRun(writeRun(h))).results.anomaly_types;

  it("a re-entry by the holder inside its lease: valid; by another process, with no outer hold, or deeper than held: reentrancy-violation", async () => {
    expect(await types(reentry({ by: 1, at: [20, 25] }))).toEqual([]);
    expect(await types(reentry({ by: 2, at: [20, 25] }))).toEqual(["reentrancy-violation"]);
    expect(await types(reentry({ by: 1, at: [20, 25], outer: false }))).toEqual(["reentrancy-violation"]);
    expect(await types(reentry({ by: 1, at: [20, 25], depth: 3 }))).toEqual(["reentrancy-violation"]);
  });

  it("a re-entry by the holder after its lease certainly ran out: reentrancy-violation; after an earlier re-entry refreshed it: valid", async () => {
    const late = await checkRun(writeRun(reentry({ by: 1, at: [2000, 2005], ttl: 1000 })));
    expect(late.results.anomaly_types).toEqual(["reentrancy-violation"]);
    expect(late.results.anomalies["reentrancy-violation"][0].explanation).toMatch(/not certainly valid at any moment from its invoke to its ok/);
    // The depth-2 re-entry at 900 ms may have refreshed the lease to 1900 ms; the depth-3 one at 1500 ms came within it.
    expect(await types(reentry({ by: 1, refreshAt: [900, 905], at: [1500, 1505], depth: 3, ttl: 1000 }))).toEqual([]);
  });

  it("a re-entry whose fence breaks the promised rule (same): reentrancy-violation", async () => {
    const { results } = await checkRun(writeRun(run(false, 7).h));
    expect(results.anomaly_types).toEqual(["reentrancy-violation"]);
    expect(results.anomalies["reentrancy-violation"][0].explanation).toMatch(/keeps its outer hold's fence/);
  });
});

describe("grant-after-cancel", () => {
  const run = (behindTheDead: boolean) => {
    const h = new History({ format: 2, lock: "mutex", client: "x" });
    acquireKind(h, 1, "k", [0, 10], "a", 1, {});
    const cancel = h.op(2, "acquire", "k", [20, 200], { ttl_ms: 1000 }, "fail", { owner: "dead-entry" }, "cancelled");
    h.release(1, "k", [300, 305], "a", 1);
    const waiter = h.op(3, "acquire", "k", [250, 2250], { ttl_ms: 1000 }, "fail", behindTheDead ? { behind: "dead-entry" } : { behind: "a" }, "timeout");
    return { h, cancel, waiter };
  };

  it("a waiter behind the holder: nothing", async () => {
    const { results } = await checkRun(writeRun(run(false).h));
    expect(results.anomaly_types).toEqual([]);
  });

  it("a waiter behind the entry of an acquire withdrawn for certain: grant-after-cancel naming both", async () => {
    const { h, cancel, waiter } = run(true);
    const { results } = await checkRun(writeRun(h));
    expect(results.anomaly_types).toEqual(["grant-after-cancel"]);
    expect(results.anomalies["grant-after-cancel"][0].events).toEqual(expect.arrayContaining([cancel.done!.index, waiter.invoke.index]));
  });

  it("a cancel-unknown (info) is no such promise: nothing", async () => {
    const h = new History({ format: 2, lock: "mutex", client: "x" });
    h.op(2, "acquire", "k", [20, 200], { ttl_ms: 1000 }, "info", undefined, "cancel-unknown");
    h.op(3, "acquire", "k", [250, 400], { ttl_ms: 1000 }, "fail", { behind: "c2" }, "timeout");
    const { results } = await checkRun(writeRun(h));
    expect(results.anomaly_types).toEqual([]);
  });
});

describe("stuck-lock (liveness)", () => {
  const stalled = () => {
    const h = new History({ format: 2, lock: "mutex", client: "x" });
    acquireKind(h, 1, "k", [0, 10], "a", 1, {}, 500);
    h.release(1, "k", [100, 105], "a", 1);
    // Waiting from 200 ms to 5.2 s, the lock free all along.
    h.op(2, "acquire", "k", [200, 5200], { ttl_ms: 500 }, "fail", { behind: "dead-entry" }, "timeout");
    return h;
  };

  it("is reported under liveness, not counted, by default", async () => {
    const { results } = await checkRun(writeRun(stalled()));
    expect(results.valid).toBe(true);
    const found = results.liveness?.findings["stuck-lock"] ?? [];
    expect(found.length).toBe(1);
    expect(found[0].explanation).toMatch(/waited behind "dead-entry"/);
  });

  it("makes the run invalid with liveness strict", async () => {
    const { results } = await checkRun(writeRun(stalled()), { liveness: "strict" });
    expect(results.valid).toBe(false);
    expect(results.anomaly_types).toEqual(["stuck-lock"]);
  });

  it("a waiter served within the threshold is no finding", async () => {
    const h = new History({ format: 2, lock: "mutex", client: "x" });
    acquireKind(h, 1, "k", [0, 10], "a", 1, {}, 500);
    h.op(2, "acquire", "k", [20, 1000], { ttl_ms: 500 }, "ok", { owner: "b", fence: 2, ttl_ms: 500 });
    h.release(1, "k", [900, 905], "a", 1);
    h.release(2, "k", [1100, 1105], "b", 2);
    const { results } = await checkRun(writeRun(h));
    expect(results.liveness?.findings).toEqual({});
  });

  it("a format 1 history has no liveness at all", async () => {
    const h = new History();
    h.acquire(1, "k", [0, 10], "a", 1);
    const { results } = await checkRun(writeRun(h));
    expect(results.liveness).toBeUndefined();
  });
});

describe("the resource's rule per lock kind", () => {
  it("a semaphore of 2 accepts a write below one higher fence, refuses it below two, and says how many it saw", () => {
    const s = new FencedStore(true, false, { kind: "semaphore", permits: 2 });
    for (const f of [5, 7]) s.commit("k", s.judgeWrite("k", f, f).next);
    const six = s.judgeWrite("k", 6, 6);
    expect([six.accepted, six.higher]).toEqual([true, 1]);
    s.commit("k", six.next);
    const four = s.judgeWrite("k", 4, 4);
    expect([four.accepted, four.higher]).toEqual([false, 2]);
  });

  it("an rw lock accepts a read at the highest written fence, and a write only above every fence read", () => {
    const s = new FencedStore(true, false, { kind: "rw", permits: 1 });
    s.commit("k", s.judgeWrite("k", 3, "w").next);
    expect(s.judgeRead("k", 2).accepted).toBe(false);
    const read = s.judgeRead("k", 5);
    expect(read.accepted).toBe(true);
    s.commit("k", read.next);
    expect(s.judgeWrite("k", 4, "w").accepted).toBe(false);
    expect(s.judgeWrite("k", 6, "w").accepted).toBe(true);
  });

  it("stale-write-accepted under a semaphore's rule, from the resource's log", async () => {
    const h = new History({ format: 2, lock: "semaphore", permits: 2, client: "x" });
    for (const [p, f] of [[1, 5], [2, 6], [3, 7]] as const) acquireKind(h, p, "k", [p * 10, p * 10 + 5], `o${p}`, f, {});
    const log = [5, 6, 7].map((f, i) => decision(i + 1, 100 + i, "k", i + 1, `o${i + 1}`, f, null, true, f));
    // o1's write lands after two higher fences took effect: fencing off let it in.
    log.push({ ...decision(4, 200, "k", 1, "o1", 5, 7, true, 9), fencing: false });
    const { results } = await checkRun(writeRun(h, log));
    expect(results.anomaly_types).toContain("stale-write-accepted");
    expect(results.anomalies["stale-write-accepted"][0].seqs).toEqual([2, 3, 4]);
  });
});

void NS;
