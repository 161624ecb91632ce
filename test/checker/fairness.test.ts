// Overtakes and waits counted on small hand-written histories (pure logic), and
// their place in results.json's stats.
import { describe, expect, it } from "vitest";
import { analyze, fairnessOf, placedAt, type FairnessStats, type Waiter } from "../../checker/index.ts";
import { History } from "./build.ts";

const MS = 1e6;
/** A waiter of key 0 by times in ms; `granted` undefined: never granted; `placed`: ms after invoke. */
const w = (invoke: number, granted?: number, placed = 0, key = 0): Waiter => ({
  key, invoke: invoke * MS, placed: (invoke + placed) * MS, granted: granted === undefined ? NaN : granted * MS,
});

/** Every pair, by the definition itself. */
function naive(ws: Waiter[]): number {
  let n = 0;
  for (const a of ws) for (const b of ws) {
    if (a.key === b.key && !Number.isNaN(a.granted) && !Number.isNaN(b.granted) && a.placed < b.invoke && b.granted < a.granted) n++;
  }
  return n;
}

describe("overtakes", () => {
  it("none when waiters are served in the order they arrived", () => {
    const f = fairnessOf([w(0, 20), w(10, 30), w(11, 40)]);
    expect(f.stats).toMatchObject({ overtakes: 0, acquires_granted: 3, overtake_rate: 0, overtaken: 0 });
  });

  it("a later arrival served first overtakes the earlier waiter", () => {
    const f = fairnessOf([w(0, 30), w(10, 20)]);
    expect(f.stats).toMatchObject({ overtakes: 1, acquires_granted: 2, overtake_rate: 0.5, overtaken: 1 });
    expect([...f.overtakenBy]).toEqual([1, 0]);
  });

  it("counts every pair: the last arrival served first overtakes everyone", () => {
    const ws = [w(0, 40), w(1, 30), w(2, 20), w(3, 10)];
    const f = fairnessOf(ws);
    expect(f.stats).toMatchObject({ overtakes: 6, overtaken: 3, overtake_rate: 1.5 });
    expect([...f.overtakenBy]).toEqual([3, 2, 1, 0]);
  });

  it("is no overtake when the later arrival was invoked before the earlier one's place was taken", () => {
    // A was invoked first but its request took its place 15 ms later, after B was invoked:
    // B may well have been ahead of it in the queue.
    expect(fairnessOf([w(0, 30, 15), w(10, 20)]).stats.overtakes).toBe(0);
    // Placed 5 ms after its invoke, before B was invoked: B was served out of turn.
    expect(fairnessOf([w(0, 30, 5), w(10, 20)]).stats.overtakes).toBe(1);
  });

  it("does not count waiters that gave up or whose outcome is unknown", () => {
    const f = fairnessOf([w(0), w(1, 20), w(2, 30)]);
    expect(f.stats).toMatchObject({ overtakes: 0, acquires_granted: 2 });
  });

  it("does not count a waiter granted at the same instant", () => {
    expect(fairnessOf([w(0, 20), w(10, 20)]).stats.overtakes).toBe(0);
  });

  it("never across keys, and reports each key", () => {
    const f = fairnessOf([w(0, 30, 0, 0), w(10, 20, 0, 1), w(11, 25, 0, 0)], ["a", "b"]);
    expect(f.stats.overtakes).toBe(1);
    expect(f.stats.by_key?.a).toMatchObject({ overtakes: 1, acquires_granted: 2 });
    expect(f.stats.by_key?.b).toMatchObject({ overtakes: 0, acquires_granted: 1 });
    expect(fairnessOf([w(0, 30), w(10, 20)]).stats.by_key).toBeUndefined();
  });

  it("agrees with counting every pair on random histories", () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 30; round++) {
      const ws: Waiter[] = [];
      for (let i = 0; i < 60; i++) {
        const invoke = Math.floor(rnd() * 100);
        // Coarse times so that ties of invokes, places and grants happen.
        ws.push(w(invoke, rnd() < 0.1 ? undefined : invoke + 1 + Math.floor(rnd() * 50), Math.floor(rnd() * 4), Math.floor(rnd() * 2)));
      }
      const f = fairnessOf(ws);
      expect(f.stats.overtakes).toBe(naive(ws));
      expect([...f.overtakenBy].reduce((s, n) => s + n, 0)).toBe(naive(ws));
      // In invoke order, as a model gives them (ranks are then positions).
      const byInvoke = [...ws].sort((a, b) => a.invoke - b.invoke);
      expect(fairnessOf(byInvoke).stats.overtakes).toBe(naive(ws));
    }
  });
});

describe("wait", () => {
  it("is grant minus invoke of the granted acquires, nearest rank", () => {
    const ws = Array.from({ length: 100 }, (_, i) => w(0, i + 1));
    expect(fairnessOf([...ws, w(0)]).stats.wait_ms).toEqual({ p50: 50, p99: 99, max: 100 });
    expect(fairnessOf([w(0)]).stats.wait_ms).toBeNull();
  });
});

describe("placedAt", () => {
  it("adds the client's queued_ms to the invoke, never past the grant", () => {
    expect(placedAt(10 * MS, 50 * MS, 5)).toBe(15 * MS);
    expect(placedAt(10 * MS, 12 * MS, 5)).toBe(12 * MS);
    for (const bad of [undefined, null, "5", -1, Infinity]) expect(placedAt(10 * MS, 50 * MS, bad)).toBe(10 * MS);
    expect(placedAt(10 * MS, NaN, 5)).toBe(10 * MS);
  });
});

describe("stats.fairness", () => {
  const fairness = (h: History) => analyze({ header: h.header, events: h.build(), decisions: null }).results.stats.fairness as FairnessStats | null;

  it("counts overtakes among a history's acquires", () => {
    const h = new History();
    h.op(0, "acquire", "k", [0, 30], { ttl_ms: 1000 }, "ok", { owner: "A", fence: null, ttl_ms: 1000 });
    h.op(1, "acquire", "k", [10, 20], { ttl_ms: 1000 }, "ok", { owner: "B", fence: null, ttl_ms: 1000 });
    h.op(2, "acquire", "k", [11, 40], { ttl_ms: 1000 }, "fail", undefined, "timeout");
    expect(fairness(h)).toMatchObject({ overtakes: 1, acquires_granted: 2, overtaken: 1, wait_ms: { p50: 10, p99: 30, max: 30 } });
  });

  it("takes a waiter's place from the queued_ms its client reported", () => {
    const h = new History();
    // A's place was taken 12 ms after its invoke, after B was invoked: B may have been ahead of it.
    h.op(0, "acquire", "k", [0, 30], { ttl_ms: 1000 }, "ok", { owner: "A", fence: 8, ttl_ms: 1000, queued_ms: 12 });
    h.op(1, "acquire", "k", [10, 20], { ttl_ms: 1000 }, "ok", { owner: "B", fence: 7, ttl_ms: 1000, queued_ms: 1 });
    expect(fairness(h)).toMatchObject({ overtakes: 0, acquires_granted: 2, placed_reported: 2 });
  });

  it("is null without acquires", () => {
    const h = new History();
    h.write(0, "k", [0, 1], "A", 1, "x");
    expect(fairness(h)).toBeNull();
  });
});
