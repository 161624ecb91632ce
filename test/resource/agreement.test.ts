// What "resource.ndjson and the store's table agree" allows after the store was
// killed mid-commit (resource/agreement.ts), on small logs made by hand; the
// real kill is test/resource/committed.test.ts's and the torture's.
import { describe, expect, it } from "vitest";
import { logTableDisagreements, type StoreRow } from "../../resource/index.ts";
import type { ResourceDecision } from "../../store/events.ts";

let seq = 0;
const write = (fence: number, accepted: boolean | null, order: number | null): ResourceDecision => ({
  seq: ++seq, time: seq, op: "write", key: "k", process: 0, owner: `h${fence}`, fence, max_before: null, accepted, data: `v${fence}`, fencing: true, order,
});
const table = (row: StoreRow) => new Map([["k", row]]);

describe("a resource log and its store's table", () => {
  const log = [write(1, true, 1), write(2, false, 2), write(3, true, 3), write(4, null, null)];

  it("agree when the table holds the last accepted write, or the unknown one after it, and a count in between", () => {
    expect(logTableDisagreements(log, table({ value: "v3", fence: 3, decisions: 3 }))).toEqual([]);
    expect(logTableDisagreements(log, table({ value: "v4", fence: 4, decisions: 4 }))).toEqual([]);
    expect(logTableDisagreements([], table({ value: null, fence: null, decisions: 0 }))).toEqual([]);
  });

  it("disagree on a count the log cannot make up, a place given twice, or a value no write left", () => {
    expect(logTableDisagreements(log, table({ value: "v4", fence: 4, decisions: 5 }))).toEqual([
      "key k: the table counts 5 decision(s): 3 line(s) with a place and only 1 of unknown outcome to make up the rest",
    ]);
    expect(logTableDisagreements(log, table({ value: "v3", fence: 3, decisions: 2 }))).toEqual([
      "key k: a line has place 3 but the table counts 2 decision(s)",
      "key k: the table counts 2 decision(s), fewer than the 3 line(s) with a place",
    ]);
    expect(logTableDisagreements([...log, write(5, true, 3)], table({ value: "v5", fence: 5, decisions: 4 }))).toEqual(["key k: place(s) 3 given to more than one line"]);
    expect(logTableDisagreements(log, table({ value: "v1", fence: 1, decisions: 3 }))[0]).toMatch(/holds value "v1" with fence 1, which is neither the last accepted write's \(seq \d+, fence 3\)/);
    // The unknown write cannot be in the table if the store counted nothing after the last accepted one.
    expect(logTableDisagreements(log, table({ value: "v4", fence: 4, decisions: 3 })).length).toBe(1);
    // A row the log never mentions, with decisions counted.
    expect(logTableDisagreements([], table({ value: "x", fence: 9, decisions: 1 })).length).toBe(2);
  });
});
