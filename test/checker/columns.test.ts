// The model keeps event indexes and process numbers in 32-bit columns until one
// does not fit (checker/table.ts Ops.widen): a history whose numbers outgrow 32
// bits must be checked exactly as the same history with small numbers.
import { describe, expect, it } from "vitest";
import { analyze } from "../../checker/index.ts";
import type { HistoryEvent } from "../../store/events.ts";
import { History } from "./build.ts";

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
