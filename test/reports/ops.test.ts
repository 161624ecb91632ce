import { describe, expect, it } from "vitest";
import { decisionsOfWrites, faultWindows, holdsOf, pairOps } from "../../reports/index.ts";
import type { HistoryEvent } from "../../store/events.ts";
import { decisions, events, OWNER_A } from "./fixture.ts";

describe("pairOps and holdsOf", () => {
  const { ops, orphans } = pairOps(events);

  it("pairs every invoke with its completion", () => {
    expect(orphans).toEqual([]);
    expect(ops.map((o) => `${o.process}:${o.f}:${o.outcome}`)).toEqual([
      "0:acquire:ok", "0:write:ok", "0:write:fail", "1:acquire:ok", "1:write:ok",
      "0:release:ok", "1:release:ok", "0:acquire:info", "2:acquire:ok", "2:write:ok",
    ]);
  });

  it("finds each hold with its owner's operations and lease", () => {
    const holds = holdsOf(ops);
    expect(holds.map((h) => [h.owner, h.fence, h.process])).toEqual([[OWNER_A, 1, 0], ["B", 2, 1], ["C", 3, 2]]);
    const [a, , c] = holds;
    expect(a.ops.map((o) => o.f)).toEqual(["write", "write", "release"]);
    expect(a.release?.completion?.value).toEqual({ released: false });
    expect(a.leaseEnd).toBe(1000e6);
    expect(c.release).toBeNull();
  });

  it("counts an invoke still open at the end as info, and reports stray completions", () => {
    const e = (index: number, process: number, type: HistoryEvent["type"], f: string): HistoryEvent => ({ index, time: index, process, type, f });
    const r = pairOps([e(0, 1, "invoke", "read"), e(1, 2, "ok", "read"), e(2, 3, "invoke", "write"), e(3, 3, "ok", "read")]);
    expect(r.ops.map((o) => [o.process, o.outcome, o.completion])).toEqual([[1, "info", null], [3, "info", null]]);
    expect(r.orphans.map((o) => o.index)).toEqual([1, 3]);
  });

  it("matches each write to the resource decision it led to", () => {
    const found = decisionsOfWrites(ops, decisions);
    const bySeq = new Map([...found].map(([op, d]) => [d.seq, op.invoke.index]));
    expect(Object.fromEntries(bySeq)).toEqual({ 1: 2, 2: 8, 3: 5, 4: 20 });
  });
});

describe("faultWindows", () => {
  const n = (index: number, ms: number, f: string, targets?: string[]): HistoryEvent =>
    ({ index, time: ms * 1e6, process: "nemesis", type: "info", f, ...(targets ? { value: { targets } } : {}) });

  it("pairs starts with stops, kills with restarts, by targets when given", () => {
    const w = faultWindows([
      n(0, 10, "kill", ["r1"]), n(1, 20, "kill", ["r2"]), n(2, 30, "restart", ["r2"]), n(3, 40, "restart", ["r1"]),
      n(4, 50, "bump-clock", ["r3"]), n(5, 60, "reset-clock"), n(6, 70, "start-partition", ["r1"]),
      n(7, 75, "flush-caches"), n(8, 80, "stop-latency"),
    ], 100e6);
    expect(w.map((x) => [x.kind, x.from / 1e6, x.to / 1e6, x.healed])).toEqual([
      ["kill", 10, 40, true], ["kill", 20, 30, true], ["clock", 50, 60, true],
      ["partition", 70, 100, false], ["flush-caches", 75, 75, true], ["latency", 80, 80, true],
    ]);
  });

  it("reads the fixture's pause window", () => {
    expect(faultWindows(events, 2104e6).map((x) => [x.kind, x.from, x.to, x.targets])).toEqual([["pause", 20e6, 1500e6, ["worker-0"]]]);
  });
});
