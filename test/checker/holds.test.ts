// The analyses of holds: fences given by the lock service, and mutual exclusion.
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateRun } from "../../bench/checker-history.ts";
import { analyze, loadRun } from "../../checker/index.ts";
import { fenceRegressions } from "../../checker/fence-regression.ts";
import { pairRun, holdsByAcquireEnd, holdsInEndOrder, RELEASE, RENEW, type Paired } from "../../checker/paired.ts";
import { sortedBy } from "../../checker/sweep.ts";

/** A key's holds in order of their acquire's ok, sorted here key by key: the reference for the sweeps over all keys. */
const byAcquireEnd = (m: Paired, key: string): Int32Array => {
  const list = m.holdsByKey.get(key)!;
  return sortedBy(list.items.subarray(0, list.length), (h) => m.ops.endOf(m.holds.acquire[h]));
};
import { checkHolds } from "../../checker/mutex.ts";
import { holdSpans, spansOf } from "../../checker/spans.ts";
import { tempRunDir } from "../helpers.ts";
import type { Results } from "../../store/events.ts";
import { History, type OpEvents } from "./build.ts";

const check = (h: History): Results => analyze({ header: h.header, events: h.build(), decisions: null }).results;
const ix = (...ops: OpEvents[]): number[] => ops.flatMap((o) => [o.invoke.index, ...(o.done ? [o.done.index] : [])]).sort((a, b) => a - b);

describe("duplicate-fence", () => {
  it("two holds of one key with the same fence", () => {
    const h = new History();
    const a = h.acquire(0, "k", [0, 1], "A", 4, 5);
    h.release(0, "k", [2, 3], "A", 4);
    const b = h.acquire(1, "k", [10, 11], "B", 4, 5);
    const r = check(h);
    expect(r.anomaly_types).toEqual(["duplicate-fence"]);
    expect(r.anomalies["duplicate-fence"][0].events).toEqual(ix(a, b));
  });

  it("is clean across keys and without fences", () => {
    const h = new History();
    h.acquire(0, "k1", [0, 1], "A", 4, 5);
    h.acquire(1, "k2", [10, 11], "B", 4, 5);
    h.acquire(2, "k1", [20, 21], "C", null, 5);
    h.acquire(3, "k1", [30, 31], "D", null, 5);
    expect(check(h).valid).toBe(true);
  });
});

describe("fence-regression", () => {
  it("a later hold got a lower fence", () => {
    const h = new History();
    const a = h.acquire(0, "k", [0, 1], "A", 5, 5);
    const b = h.acquire(1, "k", [10, 11], "B", 3, 5);
    const r = check(h);
    expect(r.anomaly_types).toEqual(["fence-regression"]);
    const [w] = r.anomalies["fence-regression"];
    expect(w.events).toEqual(ix(a, b));
    expect(w.explanation).toContain("lower fence 3 < 5");
  });

  it("acquires that overlap in time may be ordered either way", () => {
    const h = new History();
    h.acquire(0, "k", [0, 20], "A", 5, 5);
    h.acquire(1, "k", [10, 30], "B", 3, 5);
    expect(check(h).valid).toBe(true);
  });

  it("growing fences are clean", () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 3, 5);
    h.acquire(1, "k", [10, 11], "B", 5, 5);
    expect(check(h).valid).toBe(true);
  });

  // fenceRegressions sweeps every key at once; this is the walk per key it stands
  // for. Both must find the same holds beaten by the same ones, in the same order
  // within a key (ties of fence and of completion time included).
  const perKey = (m: Paired): string[] => {
    const { holds, ops } = m;
    const out: string[] = [];
    for (const [key, list] of m.holdsByKey) {
      const byEnd = byAcquireEnd(m, key);
      let next = 0;
      let top = -1;
      for (let j = 0; j < list.length; j++) {
        const h = list.items[j];
        if (Number.isNaN(holds.fence[h])) continue;
        const start = ops.start[holds.acquire[h]];
        for (; next < byEnd.length && ops.endOf(holds.acquire[byEnd[next]]) < start; next++) {
          const c = byEnd[next];
          if (!Number.isNaN(holds.fence[c]) && (top < 0 || holds.fence[c] > holds.fence[top])) top = c;
        }
        if (top >= 0 && holds.fence[top] > holds.fence[h]) out.push(`${key} ${top} ${h}`);
      }
    }
    return out;
  };
  const swept = (m: Paired): string[] => {
    // A witness cites both acquires; the beaten hold's is the later invoke.
    const holdAt = new Map(Array.from({ length: m.holds.length }, (_, h) => [m.ops.invoke[m.holds.acquire[h]], h]));
    return fenceRegressions(m).map((w) => {
      const [top, h] = (w.events ?? []).filter((i) => holdAt.has(i)).map((i) => holdAt.get(i));
      return `${w.key} ${top} ${h}`;
    });
  };
  const byKey = (xs: string[]): string[] => [...xs].sort((a, b) => a.split(" ")[0].localeCompare(b.split(" ")[0]));

  it("one sweep over all keys finds what a walk per key finds", async () => {
    const dir = tempRunDir("fc-regress-");
    try {
      generateRun(dir, { events: 20_000, seed: 5, keys: 40, clients: 60, workers: 3, fencing: true });
      const m = pairRun(await loadRun(dir));
      // Scrambled fences, some equal, some missing: regressions on most keys; times
      // cut to whole ms, so that acquires complete at the very time others start.
      let x = 7;
      for (let i = 0; i < m.ops.length; i++) {
        m.ops.start[i] = Math.floor(m.ops.start[i] / 1e6) * 1e6;
        m.ops.doneTime[i] = Math.floor(m.ops.doneTime[i] / 1e6) * 1e6;
      }
      for (let h = 0; h < m.holds.length; h++) {
        x = (x * 1103515245 + 12345) % 2147483648;
        m.holds.setFence(h, x % 11 === 0 ? NaN : x % 50);
      }
      const want = perKey(m);
      expect(new Set(want.map((w) => w.split(" ")[0])).size).toBeGreaterThan(30);
      expect(byKey(swept(m))).toEqual(byKey(want));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("mutex-violation and lease overlaps", () => {
  it("two holds both certainly within their leases", () => {
    const h = new History();
    const a = h.acquire(0, "k", [0, 1], "A", 1, 1000);
    const b = h.acquire(1, "k", [10, 11], "B", 2, 1000);
    const r = check(h);
    expect(r.anomaly_types).toEqual(["mutex-violation"]);
    const [w] = r.anomalies["mutex-violation"];
    // A's validity is bounded by its own acquire invoke + TTL, B's likewise.
    expect(w.events).toEqual(ix(a, b));
    expect(w.explanation).toMatch(/from 11\.000 ms to 1000\.000 ms/);
  });

  it("an expired lease is an overlap, not a violation", () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1, 5);
    h.acquire(1, "k", [10, 11], "B", 2, 1000);
    h.write(1, "k", [12, 13], "B", 2, "b");
    h.write(0, "k", [20, 21], "A", 1, "late", "fail");
    const r = check(h);
    expect(r.valid).toBe(true);
    expect(r.stats.lease_overlaps).toBe(1);
  });

  it("a successful renew extends certain validity from its invoke", () => {
    const h = new History();
    const a = h.acquire(0, "k", [0, 1], "A", 1, 5);
    const renew = h.renew(0, "k", [3, 4], "A", 1, 50);
    const b = h.acquire(1, "k", [10, 11], "B", 2, 1000);
    const r = check(h);
    expect(r.anomaly_types).toEqual(["mutex-violation"]);
    expect(r.anomalies["mutex-violation"][0].events).toEqual(ix(a, renew, b));
    expect(r.anomalies["mutex-violation"][0].explanation).toMatch(/until 53\.000 ms \(renew #\d+ invoked at 3\.000 ms \+ TTL 50 ms\)/);
  });

  it("a renew with an unknown or failed outcome extends nothing", () => {
    for (const outcome of ["info", "fail", "open"] as const) {
      const h = new History();
      h.acquire(0, "k", [0, 1], "A", 1, 5);
      h.renew(0, "k", [3, 4], "A", 1, 50, outcome);
      h.acquire(1, "k", [10, 11], "B", 2, 1000);
      const r = check(h);
      expect(r.valid, outcome).toBe(true);
    }
  });

  it("a release invoke ends certain validity, however late its completion", () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1, 1000);
    h.release(0, "k", [9, 30], "A", 1);
    h.acquire(1, "k", [5, 11], "B", 2, 1000);
    expect(check(h).valid).toBe(true);
  });

  it("a release invoked after the next hold began is too late", () => {
    const h = new History();
    const a = h.acquire(0, "k", [0, 1], "A", 1, 1000);
    const rel = h.release(0, "k", [12, 13], "A", 1);
    const b = h.acquire(1, "k", [5, 11], "B", 2, 1000);
    const r = check(h);
    expect(r.anomaly_types).toEqual(["mutex-violation"]);
    expect(r.anomalies["mutex-violation"][0].events).toEqual(ix(a, rel, b));
  });

  it("an acquire slower than its TTL was never certainly valid", () => {
    const h = new History();
    h.acquire(0, "k", [0, 10], "A", 1, 5);
    h.acquire(1, "k", [9, 11], "B", 2, 1000);
    expect(check(h).valid).toBe(true);
  });

  it("holds of different keys never conflict", () => {
    const h = new History();
    h.acquire(0, "k1", [0, 1], "A", 1, 1000);
    h.acquire(1, "k2", [10, 11], "B", 1, 1000);
    expect(check(h).valid).toBe(true);
  });
});

describe("mutex-violation: one sweep over every key (checkHolds)", () => {
  // What the sweep stands for: every pair of holds of a key whose spans meet
  // (spansOf's walk of each hold), found by comparing every pair.
  const perKey = (m: Paired): string[] => {
    const witnesses: string[] = [];
    for (const [key, list] of m.holdsByKey) {
      const hs = list.toArray();
      const spans = hs.map((h) => spansOf(m, h).filter((x) => x.end > x.start));
      for (let i = 0; i < hs.length; i++)
        for (let j = i + 1; j < hs.length; j++)
          if (spans[i].some((a) => spans[j].some((b) => Math.max(a.start, b.start) < Math.min(a.end, b.end)))) witnesses.push(`${key} ${Math.min(hs[i], hs[j])} ${Math.max(hs[i], hs[j])}`);
    }
    return witnesses;
  };

  it("finds what a walk per key finds, on a run with leases scrambled across many keys", async () => {
    const dir = tempRunDir("fc-mutex-");
    try {
      generateRun(dir, { events: 20_000, seed: 9, keys: 40, clients: 60, workers: 3, fencing: true, renew: true });
      const m = pairRun(await loadRun(dir));
      // Leases from none to far too long, a third of the releases sent seconds late,
      // times cut to whole ms: violations, lease overlaps, and acquires that
      // complete at the very time of another.
      let x = 11;
      const next = (): number => (x = (x * 1103515245 + 12345) % 2147483648);
      for (let h = 0; h < m.holds.length; h++) m.holds.setTtl(h, next() % 7 === 0 ? NaN : (x % 40) * 125);
      for (let i = 0; i < m.ops.length; i++) if (m.ops.f[i] === RELEASE && next() % 3 === 0) m.ops.start[i] += 5e9;
      for (let i = 0; i < m.ops.length; i++) {
        m.ops.start[i] = Math.floor(m.ops.start[i] / 1e6) * 1e6;
        m.ops.doneTime[i] = Math.floor(m.ops.doneTime[i] / 1e6) * 1e6;
      }
      // Renews answered late (their ok pushed past their lease), so that holds have more than one span.
      for (let i = 0; i < m.ops.length; i++) if (m.ops.f[i] === RENEW && m.ops.ttl[i] > 0 && next() % 2 === 0) m.ops.doneTime[i] = m.ops.start[i] + 0.9 * m.ops.ttl[i] * 1e6;
      const want = perKey(m);
      const got = checkHolds(m);
      const holdOf = new Map(Array.from({ length: m.holds.length }, (_, h) => [m.ops.invoke[m.holds.acquire[h]], h]));
      // A witness cites both holds' acquires (named here by the lower hold first).
      const named = got.violations.map((w) => {
        const [a, b] = (w.events ?? []).filter((i) => holdOf.has(i)).map((i) => holdOf.get(i)!);
        return `${w.key} ${Math.min(a, b)} ${Math.max(a, b)}`;
      });
      const byKey = (xs: string[]): string[] => [...xs].sort((a, b) => a.split(" ")[0].localeCompare(b.split(" ")[0]));
      expect(new Set(want.map((w) => w.split(" ")[0])).size).toBeGreaterThan(20);
      expect(got.leaseOverlaps).toBeGreaterThan(0);
      expect([...Array(m.holds.length).keys()].filter((h) => spansOf(m, h).length > 1).length).toBeGreaterThan(5);
      expect(byKey(named).sort()).toEqual(byKey(want).sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("the holds in order of their acquire's ok (holdsInEndOrder)", () => {
  it("is sorted once per model, in the column both threads share, and read from it after", async () => {
    const dir = tempRunDir("fc-endorder-");
    try {
      generateRun(dir, { events: 5_000, seed: 4, keys: 6, clients: 20, workers: 2, fencing: true });
      const m = pairRun(await loadRun(dir));
      expect(Atomics.load(m.holds.endOrderMade, 0)).toBe(0);
      const first = holdsInEndOrder(m);
      const ends = Array.from({ length: m.holds.length }, (_, h) => m.ops.endOf(m.holds.acquire[h]));
      const want = Array.from(ends.keys()).sort((a, b) => ends[a] - ends[b] || a - b);
      expect(Array.from(first.order)).toEqual(want);
      expect(Array.from(first.ends)).toEqual(ends);
      expect(Atomics.load(m.holds.endOrderMade, 0)).toBe(1);
      expect(m.holds.endOrder.buffer).toBeInstanceOf(SharedArrayBuffer);
      // Each key's holds, taken out of it, are those of a sort per key.
      for (const key of m.holdsByKey.keys()) expect(Array.from(holdsByAcquireEnd(m, key))).toEqual(Array.from(byAcquireEnd(m, key)));
      // What the other thread wrote is what a later caller gets: the column, not a sort of its own.
      m.holds.endOrder.reverse();
      expect(Array.from(holdsInEndOrder(m).order)).toEqual([...want].reverse());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the holds' spans in one pass (mutex.ts spans)", () => {
  const FIXTURES = join(import.meta.dirname, "../../histories/fixtures");

  /** Every hold's spans from the pass, against spansOf's walk of its operations. */
  function agree(m: Paired): number {
    const all = holdSpans(m);
    for (let h = 0; h < m.holds.length; h++) {
      const walked = spansOf(m, h).filter((x) => x.end > x.start);
      const passed = [...(all.earlier.get(h) ?? []), ...(all.end[h] > all.start[h] ? [{ start: all.start[h], end: all.end[h] }] : [])];
      expect(passed, `hold ${h}`).toEqual(walked.map((x) => ({ start: x.start, end: x.end })));
      if (walked.length > 0) expect(all.claimed[h], `hold ${h}`).toBe(walked[0].claimedEnd);
    }
    return m.holds.length;
  }

  it("agrees with each hold's own walk on holds of every shape: renewed, released twice, a renew of unknown outcome, one never released", () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1, 5);
    h.renew(0, "k", [2, 3], "A", 1, 5);
    h.write(0, "k", [4, 5], "A", 1, "x");
    h.release(0, "k", [6, 7], "A", 1);
    h.release(0, "k", [8, 9], "A", 1);
    h.acquire(1, "k", [10, 11], "B", 2, 5);
    h.renew(1, "k", [12], "B", 2, 3, "info");
    h.acquire(2, "j", [1, 2], "C", 1, 10);
    h.renew(2, "j", [3, 4], "C", 1, 10, "fail");
    h.write(2, "j", [20, 21], "C", 1, "y");
    h.acquire(3, "j", [30, 31], "D", 2, 10);
    h.release(3, "j", [40, 41], "D", 2, "info");
    // A renew answered after its hold's lease ran out: a second span from its ok.
    h.acquire(4, "m", [0, 1], "E", 1, 5);
    h.renew(4, "m", [10, 12], "E", 1, 5);
    const m = pairRun({ header: h.header, events: h.build(), decisions: null });
    expect(agree(m)).toBe(5);
    const e = [...Array(m.holds.length).keys()].find((x) => m.owners.names[m.holds.owner[x]] === "E")!;
    expect(spansOf(m, e).map((x) => [x.start, x.end])).toEqual([[1e6, 5e6], [12e6, 15e6]]);
  });

  it("agrees on every fixture and on a generated run with renews", async () => {
    let holds = 0;
    for (const kind of ["good", "bad"]) {
      for (const name of readdirSync(join(FIXTURES, kind))) {
        const run = await loadRun(join(FIXTURES, kind, name));
        holds += agree(pairRun(run));
      }
    }
    const dir = tempRunDir("fc-spans-");
    try {
      generateRun(dir, { events: 20_000, seed: 3, keys: 20, clients: 30, workers: 3, fencing: true, renew: true });
      holds += agree(pairRun(await loadRun(dir)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(holds).toBeGreaterThan(1000);
  }, 60_000);
});
