// The model check of an rw lock and of a semaphore (checker/linearizable/counted.ts):
// the search over the counted models agrees with a brute force over a plain model
// of holder sets on small random histories; hand-written histories reach
// stats.model (and, under --model strict, strict-rw-violation or
// strict-semaphore-violation) with a witness naming what it rests on; and the
// verdict's second thread, handed the lock's kind in the model's view, gives the
// one-thread verdict.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { analyze } from "../../checker/index.ts";
import { STRICT_RW_VIOLATION, STRICT_SEMAPHORE_VIOLATION, verdict, verdictThread } from "../../checker/analyze.ts";
import { certainlyRefused, countedModel, type LockKind } from "../../checker/linearizable/counted.ts";
import { ACQUIRE, mutexModel, NOT_RELEASED, RELEASE_OK, RENEW_OK, type MutexHistory } from "../../checker/linearizable/fenced-mutex.ts";
import { search, tuning } from "../../checker/linearizable/wgl.ts";
import { pairRun } from "../../checker/paired.ts";
import type { Witness } from "../../store/events.ts";
import { History } from "./build.ts";
import { build, holdsArb, type Generated } from "./search-histories.ts";

interface Holders { holders: number[]; writer: boolean; last: number | null }

/**
 * The rw lock's or semaphore's rule on explicit holder sets, apart from the
 * model under test: every order of every subset holding all answered
 * operations, against real time.
 */
function bruteForce(x: Generated, h: MutexHistory, kind: LockKind): boolean {
  const n = h.length;
  const rw = kind.lock === "rw";
  const step = (s: Holders, i: number): Holders | null => {
    const j = h.hold[i];
    const holds = s.holders.includes(j);
    switch (h.kind[i]) {
      case ACQUIRE: {
        const read = !rw || x.holds[j].read;
        if (rw ? (read ? s.writer : s.holders.length > 0) : s.holders.length >= kind.permits) return null;
        const fence = x.holds[j].fence;
        if (fence !== null && s.last !== null && !(fence > s.last)) return null;
        return { holders: [...s.holders, j], writer: !read, last: fence ?? s.last };
      }
      case RENEW_OK:
        return holds ? s : null;
      case RELEASE_OK:
        return holds ? { holders: s.holders.filter((y) => y !== j), writer: false, last: s.last } : null;
      case NOT_RELEASED:
        return holds ? null : s;
    }
    throw new Error(`kind ${h.kind[i]}`);
  };
  const before = (a: number, b: number): boolean => h.ret[a] >= 0 && h.ret[a] < h.call[b];
  const used = new Array<boolean>(n).fill(false);
  const go = (s: Holders): boolean => {
    if (h.ret.every((r, i) => r < 0 || used[i])) return true;
    for (let i = 0; i < n; i++) {
      if (used[i] || used.some((u, j) => !u && j !== i && h.ret[j] >= 0 && before(j, i))) continue;
      const next = step(s, i);
      if (next === null) continue;
      used[i] = true;
      if (go(next)) return true;
      used[i] = false;
    }
    return false;
  };
  return go({ holders: [], writer: false, last: null });
}

const kindOf = (x: Generated, lock: "rw" | "semaphore", permits: number): LockKind =>
  ({ lock, permits: lock === "rw" ? 1 : permits, reads: lock === "rw" ? Uint8Array.from(x.holds, (y) => (y.read ? 1 : 0)) : null });

describe("the search over the counted models", () => {
  const lockArb = fc.constantFrom<["rw" | "semaphore", number]>(["rw", 1], ["semaphore", 1], ["semaphore", 2], ["semaphore", 3]);

  it("agrees with brute force over holder sets on small rw and semaphore histories, with and without its memo, however the list is built", () => {
    let refused = 0;
    let sure = 0;
    fc.assert(
      fc.property(holdsArb(4), lockArb, fc.constantFrom(0, 1 << 20), fc.constantFrom(1, 512), (x, [lock, permits], maxMemo, batch) => {
        const h = build(x);
        const kind = kindOf(x, lock, permits);
        tuning.batch = batch;
        try {
          const expected = bruteForce(x, h, kind);
          if (!expected) refused++;
          const model = countedModel(h, kind);
          expect(search(h, model, { deadline: Infinity, maxMemo }).kind).toBe(expected ? "linearizable" : "not-linearizable");
          // What the model check finds without a search is never wrong.
          if (certainlyRefused(h, model) >= 0) {
            expect(expected).toBe(false);
            sure++;
          }
        } finally {
          tuning.batch = 512;
        }
      }),
      { numRuns: 600 },
    );
    // Both answers came up often enough for the agreement to mean something.
    expect(refused).toBeGreaterThan(60);
    expect(refused).toBeLessThan(540);
    expect(sure).toBeGreaterThan(10);
  });

  it("a semaphore of one permit is the mutex", () => {
    fc.assert(
      fc.property(holdsArb(3), (x) => {
        const h = build(x);
        const one = search(h, countedModel(h, kindOf(x, "semaphore", 1)), { deadline: Infinity, maxMemo: 0 }).kind;
        expect(one).toBe(search(h, mutexModel(h), { deadline: Infinity, maxMemo: 0 }).kind);
      }),
      { numRuns: 300 },
    );
  });
});

const input = (h: History) => ({ header: h.header, events: h.build(), decisions: null });

/** An acquire of a kind: `fields` go into the invoke and the ok. */
function acquireKind(h: History, p: number, at: [number, number], owner: string, fence: number, fields: Record<string, unknown>, ttl = 1000) {
  return h.op(p, "acquire", "k", at, { ttl_ms: ttl, ...fields }, "ok", { owner, fence, ttl_ms: ttl, ...fields });
}

/** Two readers at once, both released, then a writer: what an rw lock allows. */
function readersThenWriter(lock: "rw" | "mutex"): History {
  const h = new History({ format: 2, lock, client: "x" });
  acquireKind(h, 1, [0, 10], "r1", 1, { mode: "read" });
  acquireKind(h, 2, [5, 15], "r2", 2, { mode: "read" });
  h.release(1, "k", [100, 105], "r1", 1);
  h.release(2, "k", [110, 115], "r2", 2);
  acquireKind(h, 3, [120, 130], "w", 3, { mode: "write" });
  h.release(3, "k", [200, 205], "w", 3);
  return h;
}

/** `first` (20 ms lease) is released only at 100 ms; `second` is granted at 60 ms, after the lease ran out. */
function grantedUnderExpired(first: "read" | "write", second: "read" | "write") {
  const h = new History({ format: 2, lock: "rw", client: "x" });
  const a = acquireKind(h, 1, [0, 10], "a", 1, { mode: first }, 20);
  const b = acquireKind(h, 2, [50, 60], "b", 2, { mode: second });
  h.release(2, "k", [70, 75], "b", 2);
  const release = h.release(1, "k", [100, 105], "a", 1);
  return { h, a, b, release };
}

type ModelStats = { model: string; result: string; counted: boolean; permits?: number; witnesses?: Witness[] };

describe("the rw lock's model check", () => {
  it("two readers at once then a writer: linearizable for an rw lock, not for a mutex (the modes are read)", () => {
    const rw = analyze(input(readersThenWriter("rw")), { model: "strict" }).results;
    expect(rw.stats.model).toMatchObject({ model: "fenced-rw-lock", result: "linearizable", counted: true });
    expect(rw.valid).toBe(true);
    const mutex = analyze(input(readersThenWriter("mutex"))).results;
    expect(mutex.stats.model).toMatchObject({ model: "fenced-mutex", result: "not-linearizable" });
  });

  it("a reader then a reader granted after its lease ran out: linearizable (readers share)", () => {
    const { results } = analyze(input(grantedUnderExpired("read", "read").h), { model: "strict" });
    expect(results.stats.model).toMatchObject({ result: "linearizable" });
    expect(results.valid).toBe(true);
  });

  for (const [first, second, held] of [["read", "write", "1 reader held the lock"], ["write", "read", "a writer held the lock"], ["write", "write", "a writer held the lock"]] as const) {
    it(`a ${second} granted while a ${first} hold's lease had run out but its release came later: in stats.model only, and ${STRICT_RW_VIOLATION} under strict`, () => {
      const { h, a, b, release } = grantedUnderExpired(first, second);
      const lease = analyze(input(h)).results;
      expect(lease.valid).toBe(true);
      const stats = lease.stats.model as ModelStats;
      expect(stats).toMatchObject({ model: "fenced-rw-lock", result: "not-linearizable", counted: false });
      expect(stats.witnesses).toHaveLength(1);

      const strict = analyze(input(h), { model: "strict" }).results;
      expect(strict.anomaly_types).toEqual([STRICT_RW_VIOLATION]);
      const [w] = strict.anomalies[STRICT_RW_VIOLATION];
      expect(w.events).toEqual(expect.arrayContaining([a.invoke.index, b.invoke.index, b.done!.index, release.invoke.index]));
      expect(w.explanation).toContain(`no order of the acquires, renews and releases that respects real time is one an rw lock allows`);
      // Found without a search: the first hold certainly held all through the second's acquire.
      expect(w.explanation).toContain(`in every such order 1 hold held the lock all through its span, acquired before it was invoked and released only after it completed: the hold of acquire #${a.invoke.index}`);
      expect(w.explanation).toMatch(new RegExp(`for a ${first}, whose release #${release.invoke.index} was invoked only at 100\\.000 ms; its lease of 20 ms .* had run out`));
    });
  }

  it("a conflict no single hold makes certain is the search's: two writers neither of which released, a reader released while the first was granted", () => {
    const h = new History({ format: 2, lock: "rw", client: "x" });
    acquireKind(h, 1, [0, 10], "r", 1, { mode: "read" });
    h.release(1, "k", [30, 50], "r", 1);
    const w1 = acquireKind(h, 2, [20, 40], "w1", 2, { mode: "write" });
    const w2 = acquireKind(h, 3, [35, 45], "w2", 3, { mode: "write" });
    const { results } = analyze(input(h), { model: "strict" });
    expect(results.stats.model).toMatchObject({ result: "not-linearizable" });
    const [w] = results.anomalies[STRICT_RW_VIOLATION];
    expect(w.explanation).toMatch(/in the furthest such order the search found, \d of 4 operations in.*, a writer held the lock/);
    expect(w.events).toEqual(expect.arrayContaining([w1.invoke.index, w2.invoke.index]));
  });
});

/** Holds of a `permits`-permit semaphore: three acquires, the third granted at 60 ms; the first's lease (`ttl`) ends its certainty. */
function threeHolders(permits: number, ttl: number, firstReleasedAt = 100) {
  const h = new History({ format: 2, lock: "semaphore", permits, client: "x" });
  const a = acquireKind(h, 1, [0, 10], "a", 1, {}, ttl);
  acquireKind(h, 2, [20, 30], "b", 2, {});
  const c = acquireKind(h, 3, [50, 60], "c", 3, {});
  const release = h.release(1, "k", [firstReleasedAt, firstReleasedAt + 5], "a", 1);
  h.release(2, "k", [200, 205], "b", 2);
  h.release(3, "k", [210, 215], "c", 3);
  return { h, a, c, release };
}

describe("the semaphore's model check", () => {
  it("three holders of three permits: linearizable, the permits in stats.model", () => {
    const { results } = analyze(input(threeHolders(3, 1000).h), { model: "strict" });
    expect(results.stats.model).toMatchObject({ model: "fenced-semaphore", permits: 3, result: "linearizable" });
    expect(results.valid).toBe(true);
  });

  it("the third of two permits granted only after the first was released: linearizable", () => {
    const { results } = analyze(input(threeHolders(2, 1000, 40).h), { model: "strict" });
    expect(results.stats.model).toMatchObject({ result: "linearizable" });
    expect(results.valid).toBe(true);
  });

  it("the third of two permits granted while the first's lease had run out, its release later: strict-semaphore-violation under strict only", () => {
    const { h, a, c, release } = threeHolders(2, 20);
    const lease = analyze(input(h)).results;
    expect(lease.valid).toBe(true);
    expect(lease.stats.model).toMatchObject({ model: "fenced-semaphore", permits: 2, result: "not-linearizable", counted: false });
    const strict = analyze(input(h), { model: "strict" }).results;
    expect(strict.anomaly_types).toEqual([STRICT_SEMAPHORE_VIOLATION]);
    const [w] = strict.anomalies[STRICT_SEMAPHORE_VIOLATION];
    expect(w.events).toEqual(expect.arrayContaining([a.invoke.index, c.invoke.index, release.invoke.index]));
    expect(w.explanation).toMatch(/one a semaphore of 2 permits allows\. Acquire #\d+ .*in every such order 2 holds held the lock all through its span.*the hold of acquire #0 .*, whose release #\d+ was invoked only at 100\.000 ms/);
  });

  it("three certain holders of two permits: semaphore-overflow, and the model check finds it too", () => {
    const { results } = analyze(input(threeHolders(2, 1000).h), { model: "strict" });
    expect(results.anomaly_types).toEqual(["semaphore-overflow", STRICT_SEMAPHORE_VIOLATION]);
  });

  it("a fence not above one granted before: the witness says so", () => {
    const h = new History({ format: 2, lock: "semaphore", permits: 3, client: "x" });
    acquireKind(h, 1, [0, 10], "a", 5, {});
    acquireKind(h, 2, [20, 30], "b", 4, {});
    const { results } = analyze(input(h), { model: "strict" });
    expect(results.anomalies[STRICT_SEMAPHORE_VIOLATION][0].explanation).toMatch(/its fence 4 is not above fence 5, granted before it by acquire #0/);
  });
});

describe("the verdict's second thread", () => {
  const untimed = (v: ReturnType<typeof verdict>): unknown => ({ ...v, results: { ...v.results, stats: { ...v.results.stats, model: { ...(v.results.stats.model as object), elapsed_ms: 0 } } } });

  it("is handed the lock's kind and the read holds: the one-thread verdict on rw and semaphore runs", async () => {
    const runs = [readersThenWriter("rw"), grantedUnderExpired("read", "write").h, threeHolders(2, 20).h];
    for (const h of runs) {
      for (const model of ["lease", "strict"] as const) {
        const one = verdict(pairRun(input(h)), { model });
        const two = await verdictThread(true).verdict(pairRun(input(h)), { model });
        expect(untimed(two)).toEqual(untimed(one));
      }
    }
    const shared = await verdictThread(true).verdict(pairRun(input(readersThenWriter("rw"))));
    expect(shared.results.stats.model).toMatchObject({ model: "fenced-rw-lock", result: "linearizable" });
  }, 60_000);
});
