// The model keeps event indexes and process numbers in 32-bit columns until one
// does not fit (checker/table.ts Ops.widen), and fences, TTLs and seqs in 32-bit
// floats until one is not one (Narrow): a history whose numbers outgrow them must
// be checked exactly as the same history with small numbers.
import { describe, expect, it } from "vitest";
import { analyze } from "../../checker/index.ts";
import { pairRun } from "../../checker/paired.ts";
import type { HistoryEvent } from "../../store/events.ts";
import { decision, History } from "./build.ts";

/** A mutex violation on k1 (two holds valid at once) and a stale write. */
function history(): History {
  const h = new History();
  h.acquire(1, "k1", [0, 1], "a", 1);
  h.acquire(2, "k1", [2, 3], "b", 2);
  h.write(2, "k1", [4, 5], "b", 2, "x");
  h.write(1, "k1", [6, 7], "a", 1, "y");
  h.release(1, "k1", [8, 9], "a", 1);
  h.release(2, "k1", [10, 11], "b", 2);
  return h;
}

describe("columns past 32 bits", () => {
  it("indexes and process numbers beyond 2^31 give the same verdict and witnesses, with the large numbers", () => {
    const h = history();
    const small = analyze({ header: h.header, events: h.build(), decisions: null });
    const BIG = 2 ** 40;
    const big = (e: HistoryEvent): HistoryEvent => ({ ...e, index: e.index + BIG, process: e.process === "nemesis" ? e.process : e.process + BIG });
    const large = analyze({ header: h.header, events: h.build().map(big), decisions: null });
    expect(large.results.valid).toBe(small.results.valid);
    expect(large.results.anomaly_types).toEqual(small.results.anomaly_types);
    expect(small.results.anomaly_types.length).toBeGreaterThan(0);
    for (const type of small.results.anomaly_types) {
      expect(large.results.anomalies[type].map((w) => w.events?.map((i) => i - BIG))).toEqual(small.results.anomalies[type].map((w) => w.events));
    }
  });
});

describe("fences, TTLs and seqs in 32-bit floats", () => {
  it("a fence past 2^24 or a TTL that is no 32-bit float widens its column, and every number reads back exactly", () => {
    const h = new History();
    h.acquire(1, "k1", [0, 1], "a", 1, 1000);
    h.acquire(2, "k1", [2, 3], "b", 2 ** 24 + 1, 0.1);
    h.write(2, "k1", [4, 5], "b", 2 ** 24 + 1, "x");
    h.release(2, "k1", [6, 7], "b", 2 ** 24 + 1);
    const m = pairRun({ header: h.header, events: h.build(), decisions: null });
    expect(m.ops.fence).toBeInstanceOf(Float64Array);
    expect(m.ops.ttl).toBeInstanceOf(Float64Array);
    expect(m.holds.fence).toBeInstanceOf(Float64Array);
    expect(Array.from(m.holds.fence.subarray(0, m.holds.length))).toEqual([1, 2 ** 24 + 1]);
    expect(Array.from(m.holds.ttl.subarray(0, m.holds.length))).toEqual([1000, 0.1]);
    const small = pairRun({ header: h.header, events: history().build(), decisions: null });
    expect(small.ops.fence).toBeInstanceOf(Float32Array);
    expect(small.holds.ttl).toBeInstanceOf(Float32Array);
  });

  it("a decision's seq, process, fence or max_before past 2^24 widens its own column alone", () => {
    const h = new History();
    h.acquire(1, "k1", [0, 1], "a", 1, 1000);
    const big = 2 ** 24 + 1;
    const cols = ["seq", "process", "fence", "maxBefore"] as const;
    for (const [k, col] of cols.entries()) {
      // One decision with a number that only 64 bits hold, in column `col`, between two that fit 32.
      const d = (seq: number, wide: boolean) => decision(col === "seq" && wide ? big : seq, 10 + seq, "k1", col === "process" && wide ? big : 1, "a",
        col === "fence" && wide ? big : 1, col === "maxBefore" && wide ? big : null, true, `#${seq}`);
      const m = pairRun({ header: h.header, events: h.build(), decisions: [d(1, false), d(2, true), d(3, false)] });
      const ds = m.decisions!;
      for (const other of cols) expect(ds[other], `${col} made ${other}`).toBeInstanceOf(other === col ? Float64Array : Float32Array);
      const column = Array.from(ds[col].subarray(0, 3));
      expect(column[1], `column ${k}`).toBe(big);
    }
  });
});
