// Committed decisions (format 2): a database's resource logs each decision once
// its store answered, so lines may come in any order; `order` is the order they
// took effect, and `accepted: null` a decision whose outcome nobody knows. The
// checker judges by `order`, and proves nothing from an unknown outcome.
import { describe, expect, it } from "vitest";
import { analyze } from "../../checker/index.ts";
import type { ResourceDecision, Results } from "../../store/events.ts";
import { decision, History, writeRun } from "./build.ts";
import { checkRun } from "../../checker/run.ts";
import { BadInput } from "../../lib/exit.ts";

const check = (h: History, decisions: ResourceDecision[]): Results => analyze({ header: h.header, events: h.build(), decisions }).results;
const placed = (d: ResourceDecision, order: number | null, accepted: boolean | null = d.accepted): ResourceDecision => ({ ...d, accepted, order, ...(accepted === null ? { max_before: null } : {}) });

/** Two holders of key k: A (fence 1) then B (fence 2); A's late write comes after B's. */
function twoHolders() {
  const h = new History({ format: 2 });
  h.acquire(0, "k", [0, 1], "A", 1, 5);
  h.acquire(1, "k", [10, 11], "B", 2, 1000);
  h.write(1, "k", [12, 14], "B", 2, "b");
  h.write(0, "k", [13, 15], "A", 1, "a", "fail");
  return h;
}

describe("committed decisions", () => {
  it("orders a key's decisions by `order`, not by line: a refusal logged before the write that caused it is not a false rejection", () => {
    const h = twoHolders();
    // B's write took effect first (order 1) but was logged after A's refusal (order 2).
    const refusal = placed(decision(1, 14, "k", 0, "A", 1, 2, false, "a"), 2);
    const write = placed(decision(2, 14, "k", 1, "B", 2, null, true, "b"), 1);
    const r = check(h, [refusal, write]);
    expect(r.anomaly_types).toEqual([]);
    expect(r.valid).toBe(true);
    // The same lines read in line order would have been a false rejection: the order is what decides.
    const unordered = check(twoHoldersFormat1(), [
      decision(1, 14, "k", 0, "A", 1, null, false, "a"),
      decision(2, 14, "k", 1, "B", 2, null, true, "b"),
    ]);
    expect(unordered.anomaly_types).toContain("false-rejection");
  });

  it("a stale write found in `order`, whatever the lines' order", () => {
    const h = new History({ format: 2 });
    h.acquire(0, "k", [0, 1], "A", 1, 5);
    h.acquire(1, "k", [10, 11], "B", 2, 1000);
    h.write(1, "k", [12, 14], "B", 2, "b");
    h.write(0, "k", [13, 15], "A", 1, "a");
    const late = placed({ ...decision(1, 14, "k", 0, "A", 1, 2, true, "a"), fencing: false }, 2);
    const first = placed({ ...decision(2, 14, "k", 1, "B", 2, null, true, "b"), fencing: false }, 1);
    const r = check(h, [late, first]);
    expect(r.anomaly_types).toEqual(["stale-write-accepted"]);
    expect(r.anomalies["stale-write-accepted"][0].seqs).toEqual([2, 1]);
  });

  it("proves nothing from a write of unknown outcome: no refusal at or below it is false, and it is no stale write", () => {
    const h = new History({ format: 2 });
    h.acquire(0, "k", [0, 1], "A", 1, 5);
    h.acquire(1, "k", [10, 11], "B", 2, 5);
    h.acquire(2, "k", [20, 21], "C", 3, 1000);
    h.write(1, "k", [12, 14], "B", 2, "b", "info");
    h.write(0, "k", [15, 17], "A", 1, "a", "fail");
    h.write(2, "k", [22, 24], "C", 3, "c");
    h.write(1, "k", [25, 27], "B", 2, "b2", "info");
    const r = check(h, [
      // B's write: the store was lost during its commit. It may have taken effect (fence 2).
      placed(decision(1, 13, "k", 1, "B", 2, null, true, "b"), null, null),
      // A's fence 1 was refused: only B's write of unknown outcome can explain it, so it is not proven false.
      placed(decision(2, 16, "k", 0, "A", 1, 2, false, "a"), 2),
      placed(decision(3, 23, "k", 2, "C", 3, 2, true, "c"), 3),
      // B's late write with fence 2 after C's 3: had it been accepted it would be stale, but nobody knows.
      placed(decision(4, 26, "k", 1, "B", 2, null, true, "b2"), null, null),
    ]);
    expect(r.anomaly_types).toEqual([]);
    expect(r.stats.stale_writes_refused).toBe(1);
    expect(r.stats.writes_accepted).toBe(1);
    // The same log with B's first write refused: A's refusal is then false.
    const r2 = check(h, [placed(decision(1, 13, "k", 1, "B", 2, null, false, "b"), 1), placed(decision(2, 16, "k", 0, "A", 1, 2, false, "a"), 2)]);
    expect(r2.anomaly_types).toContain("false-rejection");
  });

  it("a refusal above every write of unknown outcome is still a false rejection", () => {
    const h = new History({ format: 2 });
    h.acquire(1, "k", [10, 11], "B", 3, 1000);
    h.write(1, "k", [12, 14], "B", 3, "b", "fail");
    const r = check(h, [placed(decision(1, 14, "k", 1, "B", 3, null, false, "b"), 1)]);
    expect(r.anomaly_types).toEqual(["false-rejection"]);
  });

  it("refuses `order` and `accepted: null` in a format-1 run, naming the line's seq (254)", async () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1, 5);
    h.write(0, "k", [2, 3], "A", 1, "a", "info");
    const dir = writeRun(h, [placed(decision(1, 2, "k", 0, "A", 1, null, true, "a"), null, null)]);
    const err = await checkRun(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadInput);
    expect((err as Error).message).toBe(`resource.ndjson seq 1: "accepted": null needs a format 2 history (history.ndjson's header says format 1)`);
  });
});

function twoHoldersFormat1(): History {
  const h = new History();
  h.acquire(0, "k", [0, 1], "A", 1, 5);
  h.acquire(1, "k", [10, 11], "B", 2, 1000);
  h.write(1, "k", [12, 14], "B", 2, "b");
  h.write(0, "k", [13, 15], "A", 1, "a", "fail");
  return h;
}
