// Properties of the lock kinds' analyses over generated histories (fast-check), as
// properties.test.ts has them for the mutex's: holds whose spans are certain (a
// long lease: each hold is certainly valid from its acquire's ok until its
// release is invoked), checked against a brute force over those intervals.
// rw-violation is found exactly when a write hold's interval meets another's,
// semaphore-overflow exactly when more than N intervals meet at one instant, each
// witness naming holds that do meet; reentrancy-violation exactly when another
// owner is granted within a hold's span after one of its inner releases.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { analyze } from "../../checker/index.ts";
import type { HistoryHeader, Witness } from "../../store/events.ts";
import { History, type OpEvents } from "./build.ts";

const RUNS = { numRuns: 300 };
/** Long enough that no lease runs out within a generated history. */
const TTL = 1_000_000;

interface Hold { start: number; end: number; read: boolean; acquire: OpEvents }

/** One hold per process: acquire invoked at `at`, ok after `wait`, released (invoke) `length` ms after the ok. */
const holdArb = fc.record({
  at: fc.integer({ min: 0, max: 60 }),
  wait: fc.integer({ min: 0, max: 5 }),
  length: fc.integer({ min: 1, max: 30 }),
  read: fc.boolean(),
});
type HoldPlan = typeof holdArb extends fc.Arbitrary<infer T> ? T : never;

function history(header: Partial<HistoryHeader>, plans: HoldPlan[], rw: boolean): { input: Parameters<typeof analyze>[0]; holds: Hold[] } {
  const h = new History({ format: 2, client: "x", ...header });
  const holds = plans.map((p, i): Hold => {
    const mode = rw ? { mode: p.read ? "read" : "write" } : {};
    const ok = p.at + p.wait;
    const acquire = h.op(i, "acquire", "k", [p.at, ok], { ttl_ms: TTL, ...mode }, "ok", { owner: `o${i}`, fence: null, ttl_ms: TTL, ...mode });
    h.release(i, "k", [ok + p.length, ok + p.length + 1], `o${i}`, null);
    return { start: ok, end: ok + p.length, read: p.read, acquire };
  });
  return { input: { header: h.header, events: h.build(), decisions: null }, holds };
}

/** Do these holds' intervals [start, end) share an instant? */
const meet = (hs: Hold[]): boolean => Math.max(...hs.map((x) => x.start)) < Math.min(...hs.map((x) => x.end));

/** The holds a witness names, by their acquires' invokes. */
const named = (w: Witness, holds: Hold[]): Hold[] => holds.filter((x) => w.events?.includes(x.acquire.invoke.index));

describe("rw-violation", () => {
  it("is found exactly when a write hold's certain span meets another hold's, naming two holds that meet, one a write", () => {
    let found = 0;
    fc.assert(
      fc.property(fc.array(holdArb, { minLength: 1, maxLength: 6 }), (plans) => {
        const { input, holds } = history({ lock: "rw" }, plans, true);
        const expected = holds.some((a, i) => holds.some((b, j) => i < j && (!a.read || !b.read) && meet([a, b])));
        const { results } = analyze(input);
        const witnesses = results.anomalies["rw-violation"] ?? [];
        expect(witnesses.length > 0).toBe(expected);
        for (const w of witnesses) {
          const pair = named(w, holds);
          expect(pair).toHaveLength(2);
          expect(meet(pair)).toBe(true);
          expect(pair.some((x) => !x.read)).toBe(true);
        }
        if (expected) found++;
      }),
      RUNS,
    );
    expect(found).toBeGreaterThan(RUNS.numRuns / 10);
  });
});

describe("semaphore-overflow", () => {
  it("is found exactly when more than N certain spans meet at one instant, naming N + 1 holds that do", () => {
    let found = 0;
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.array(holdArb, { minLength: 1, maxLength: 7 }), (permits, plans) => {
        const { input, holds } = history({ lock: "semaphore", permits }, plans, false);
        // The most intervals at one instant: at some interval's start.
        const most = Math.max(...holds.map((x) => holds.filter((y) => y.start <= x.start && x.start < y.end).length));
        const { results } = analyze(input);
        const witnesses = results.anomalies["semaphore-overflow"] ?? [];
        expect(witnesses.length > 0).toBe(most > permits);
        for (const w of witnesses) {
          const together = named(w, holds);
          expect(together).toHaveLength(permits + 1);
          expect(meet(together)).toBe(true);
        }
        if (most > permits) found++;
      }),
      RUNS,
    );
    expect(found).toBeGreaterThan(RUNS.numRuns / 10);
  });
});

/** A reentrant hold: its outer acquire at `at`, re-entries each acquired and released after gaps, then its outer release. */
const reentrantArb = fc.record({
  at: fc.integer({ min: 0, max: 60 }),
  reentries: fc.array(fc.tuple(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 10 })), { maxLength: 2 }),
  tail: fc.integer({ min: 1, max: 20 }),
});

interface Reentrant { start: number; end: number; inner: { at: number; release: OpEvents }[]; acquire: OpEvents }

describe("reentrancy-violation", () => {
  it("is found exactly when another owner is granted within a hold's certain span after one of its inner releases, naming both", () => {
    let found = 0;
    fc.assert(
      fc.property(fc.array(reentrantArb, { minLength: 1, maxLength: 4 }), (plans) => {
        const h = new History({ format: 2, lock: "reentrant", client: "x" });
        const holds = plans.map((p, i): Reentrant => {
          const owner = `o${i}`;
          const acquire = h.op(i, "acquire", "k", [p.at, p.at + 1], { ttl_ms: TTL, depth: 1 }, "ok", { owner, fence: null, ttl_ms: TTL, depth: 1 });
          let t = p.at + 1;
          const inner: Reentrant["inner"] = [];
          for (const [before, inside] of p.reentries) {
            t += before;
            h.op(i, "acquire", "k", [t, t + 1], { ttl_ms: TTL, depth: 2 }, "ok", { owner, fence: null, ttl_ms: TTL, depth: 2 });
            t += 1 + inside;
            inner.push({ at: t, release: h.op(i, "release", "k", [t, t + 1], { owner, fence: null, depth: 2 }, "ok", { released: true }) });
            t += 1;
          }
          t += p.tail;
          h.op(i, "release", "k", [t, t + 1], { owner, fence: null, depth: 1 }, "ok", { released: true });
          return { start: p.at + 1, end: t, inner, acquire };
        });
        const { results } = analyze({ header: h.header, events: h.build(), decisions: null });
        // A granted while B certainly holds, after an inner release of B's was invoked.
        const expected = holds.some((a) => holds.some((b) => b !== a && a.start < b.end && b.inner.some((r) => r.at < a.start)));
        const witnesses = results.anomalies["reentrancy-violation"] ?? [];
        expect(witnesses.length > 0).toBe(expected);
        for (const w of witnesses) {
          const [a, b] = holds.filter((x) => w.events?.includes(x.acquire.invoke.index));
          expect(a && b).toBeTruthy();
          // One of the two released a re-entry before the other's grant, within its own span.
          const told = [[a, b], [b, a]].some(([x, y]) => x.inner.some((r) => w.events?.includes(r.release.invoke.index) && r.at < y.start && y.start < x.end));
          expect(told).toBe(true);
        }
        if (expected) found++;
      }),
      RUNS,
    );
    expect(found).toBeGreaterThan(RUNS.numRuns / 20);
  });
});
