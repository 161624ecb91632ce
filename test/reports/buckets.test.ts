// The overview's buckets (reports/buckets.ts): counting an operation's two events
// and the operation at once (`completed`), in buckets made wide enough up front
// (`spanning`), gives exactly what counting them one at a time does while the
// buckets merge as the run goes past them.
import { describe, expect, it } from "vitest";
import { Buckets, MAX_BUCKETS, OP_ROWS, OUTCOMES } from "../../reports/buckets.ts";

describe("the overview's buckets", () => {
  it("count an operation at once, in buckets wide enough up front, as one event at a time while merging", () => {
    let x = 3;
    const next = (n: number): number => (x = (x * 1103515245 + 12345) % 2147483648) % n;
    const origin = 5_000_000_000;
    // Operations over 40 s of run time: 10 ms buckets merge twice on the way.
    const ops = Array.from({ length: 20_000 }, () => {
      const invoked = origin + next(40_000) * 1e6 + next(1e6);
      return { invoked, done: invoked + next(3_000) * 1e6 + next(1000), row: next(OP_ROWS.length), outcome: next(OUTCOMES.length) };
    }).sort((a, b) => a.invoked - b.invoked);
    const last = Math.max(...ops.map((o) => o.done));
    const oneByOne = new Buckets(origin);
    for (const o of ops) {
      oneByOne.event(o.invoked);
      oneByOne.event(o.done);
      oneByOne.op(o.invoked, o.row, o.outcome, (o.done - o.invoked) / 1e6, o.row === 0);
    }
    const atOnce = Buckets.spanning(origin, last);
    for (const o of ops) atOnce.completed(o.invoked, o.done, o.row, o.outcome, o.row === 0);
    expect(oneByOne.width).toBeGreaterThan(10_000_000 * 2);
    expect(atOnce.width).toBe(oneByOne.width);
    expect(atOnce.used).toBeLessThanOrEqual(MAX_BUCKETS);
    expect(atOnce).toEqual(oneByOne);
    // And in buckets that still have to merge on the way.
    const merging = new Buckets(origin);
    for (const o of ops) merging.completed(o.invoked, o.done, o.row, o.outcome, o.row === 0);
    expect(merging).toEqual(oneByOne);
  });
});
