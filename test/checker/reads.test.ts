// Fenced reads (--fence-reads): the resource's rule for them (resource/fences.ts)
// as the checker applies it, from resource.ndjson and from the history alone:
// a write may meet a read's fence, a read is refused only below the highest fence,
// and what reads did is counted in stats with witnesses that name their events.
import { describe, expect, it } from "vitest";
import { analyze } from "../../checker/index.ts";
import type { ResourceDecision, Results } from "../../store/events.ts";
import { decision, History, type OpEvents } from "./build.ts";

function check(h: History, decisions: ResourceDecision[] | null = null): { results: Results; warnings: string[] } {
  return analyze({ header: h.header, events: h.build(), decisions });
}

const ix = (...ops: OpEvents[]): number[] => ops.flatMap((o) => [o.invoke.index, ...(o.done ? [o.done.index] : [])]).sort((a, b) => a - b);
const read = (seq: number, time: number, process: number, owner: string, fence: number | null, maxBefore: number | null, accepted: boolean, data: unknown): ResourceDecision =>
  decision(seq, time, "k", process, owner, fence, maxBefore, accepted, data, "read");

/** B (fence 2) reads with its fence, then writes with it; `write` is what became of the write. */
function readThenWrite(write: "ok" | "fail") {
  const h = new History({ workload: "counter" });
  h.acquire(0, "k", [0, 1], "A", 1, 5);
  h.acquire(1, "k", [10, 11], "B", 2);
  const br = h.read(1, "k", [12, 13], "B", 2, 0);
  const bw = h.write(1, "k", [14, 15], "B", 2, 1, write);
  const log = [read(1, 12.5, 1, "B", 2, null, true, 0), decision(2, 14.5, "k", 1, "B", 2, 2, write === "ok", 1)];
  return { h, br, bw, log };
}

describe("false-rejection with fenced reads", () => {
  it("from resource.ndjson: a write refused with the fence its own hold's read set was refused falsely", () => {
    const { h, br, bw, log } = readThenWrite("fail");
    const { results: r } = check(h, log);
    expect(r.anomaly_types).toEqual(["false-rejection"]);
    const [w] = r.anomalies["false-rejection"];
    expect(w.seqs).toEqual([1, 2]);
    // The read's decision is traced to the read that sent it.
    expect(w.events).toEqual(ix(br, bw));
    expect(w.explanation).toContain(`sent by read #${br.invoke.index}`);
    expect(w.explanation).toContain("which a write may equal");
  });

  it("from the history: the same", () => {
    const { h, br, bw } = readThenWrite("fail");
    const { results: r } = check(h);
    expect(r.anomaly_types).toEqual(["false-rejection"]);
    expect(r.anomalies["false-rejection"][0].events).toEqual(ix(br, bw));
  });

  it("is clean when the write is accepted", () => {
    const { h, log } = readThenWrite("ok");
    expect(check(h, log).results.valid).toBe(true);
    expect(check(h).results.valid).toBe(true);
  });

  it("is clean when a read with a higher fence came first", () => {
    // B's lease runs out between its read and its write; C reads with fence 3 meanwhile.
    const h = new History({ workload: "counter" });
    h.acquire(1, "k", [10, 11], "B", 2, 5);
    h.read(1, "k", [12, 13], "B", 2, 0);
    h.acquire(2, "k", [20, 21], "C", 3);
    h.read(2, "k", [22, 23], "C", 3, 0);
    h.write(1, "k", [24, 25], "B", 2, 1, "fail");
    const log = [read(1, 12.5, 1, "B", 2, null, true, 0), read(2, 22.5, 2, "C", 3, 2, true, 0), decision(3, 24.5, "k", 1, "B", 2, 3, false, 1)];
    expect(check(h, log).results.valid).toBe(true);
    expect(check(h).results.valid).toBe(true);
  });

  it("a write must still beat a write's equal fence", () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1);
    h.write(0, "k", [2, 3], "A", 1, "a1");
    h.read(0, "k", [4, 5], "A", 1, "a1");
    h.write(0, "k", [6, 7], "A", 1, "a2", "fail");
    const log = [decision(1, 2.5, "k", 0, "A", 1, null, true, "a1"), read(2, 4.5, 0, "A", 1, 1, true, "a1"), decision(3, 6.5, "k", 0, "A", 1, 1, false, "a2")];
    expect(check(h, log).results.valid).toBe(true);
    expect(check(h).results.valid).toBe(true);
  });
});

/** C1 of the catalogue with fenced reads: A reads with fence 1, its lease runs out, B reads with 2; A's write is refused, B's accepted. */
function counterRun(aWrite: "ok" | "fail", fencing = true) {
  const h = new History({ workload: "counter", fencing });
  h.acquire(0, "k", [0, 1], "A", 1, 5);
  const ar = h.read(0, "k", [2, 3], "A", 1, 0);
  h.acquire(1, "k", [10, 11], "B", 2);
  const br = h.read(1, "k", [12, 13], "B", 2, 0);
  const aw = h.write(0, "k", [20, 21], "A", 1, 1, aWrite);
  const bw = h.write(1, "k", [22, 23], "B", 2, 1);
  const log = [
    read(1, 2.5, 0, "A", 1, null, true, 0),
    read(2, 12.5, 1, "B", 2, 1, true, 0),
    decision(3, 20.5, "k", 0, "A", 1, 2, aWrite === "ok", 1),
    decision(4, 22.5, "k", 1, "B", 2, 2, true, 1),
  ].map((d) => ({ ...d, fencing }));
  return { h, ar, br, aw, bw, log };
}

describe("the counter with fenced reads", () => {
  it("is valid when the stale write is refused, and counts the reads", () => {
    const { h, log } = counterRun("fail");
    for (const decisions of [log, null]) {
      const { results: r } = check(h, decisions);
      expect(r.valid).toBe(true);
      expect(r.stats.stale_writes_refused).toBe(1);
      expect(r.stats.stale_reads_refused).toBe(0);
      expect(r.stats.fenced_reads).toEqual({ accepted: 2, stale_accepted: 0, falsely_refused: 0, witnesses: [] });
    }
  });

  it("with fencing off the stale write gets through: a lost update, not a stale write (a read is not a write)", () => {
    const { h, log } = counterRun("ok", false);
    const { results: r } = check(h, log);
    expect(r.anomaly_types).toEqual(["lost-update"]);
  });
});

/** B reads and writes with fence 2; then A, whose lease ran out, reads with fence 1. */
function lateRead(outcome: "ok" | "fail", fencing = true) {
  const h = new History({ fencing });
  h.acquire(0, "k", [0, 1], "A", 1, 5);
  h.acquire(1, "k", [10, 11], "B", 2);
  const br = h.read(1, "k", [12, 13], "B", 2, null);
  const bw = h.write(1, "k", [14, 15], "B", 2, "b");
  const ar = h.read(0, "k", [20, 21], "A", 1, "b", outcome);
  const log = [
    read(1, 12.5, 1, "B", 2, null, true, null),
    decision(2, 14.5, "k", 1, "B", 2, 2, true, "b"),
    read(3, 20.5, 0, "A", 1, 2, outcome === "ok", outcome === "ok" ? "b" : null),
  ].map((d) => ({ ...d, fencing }));
  return { h, br, bw, ar, log };
}

describe("refused and stale reads", () => {
  it("a read refused for its stale fence is counted, and is no anomaly", () => {
    const { h, log } = lateRead("fail");
    for (const decisions of [log, null]) {
      const { results: r, warnings } = check(h, decisions);
      expect(r.valid).toBe(true);
      expect(r.stats.stale_reads_refused).toBe(1);
      expect(r.stats.fenced_reads).toMatchObject({ accepted: 1, stale_accepted: 0, falsely_refused: 0 });
      expect(warnings.join("\n")).not.toContain("reads");
    }
  });

  it("from resource.ndjson: a stale read accepted under fencing is counted with a witness and a warning, not an anomaly type", () => {
    const { h, bw, ar, log } = lateRead("ok");
    const { results: r, warnings } = check(h, log);
    expect(r.valid).toBe(true);
    expect(r.anomaly_types).toEqual([]);
    const reads = r.stats.fenced_reads as { stale_accepted: number; witnesses: { seqs: number[]; events: number[]; explanation: string }[] };
    expect(reads.stale_accepted).toBe(1);
    expect(reads.witnesses[0].seqs).toEqual([2, 3]);
    expect(reads.witnesses[0].events).toEqual(ix(bw, ar));
    expect(reads.witnesses[0].explanation).toContain("must refuse");
    expect(warnings.join("\n")).toContain("accepted 1 reads whose fence was stale");
  });

  it("from the history: a read answered after a higher fence certainly took effect", () => {
    const { h, br, ar } = lateRead("ok");
    const reads = check(h).results.stats.fenced_reads as { stale_accepted: number; witnesses: { events: number[] }[] };
    expect(reads.stale_accepted).toBe(1);
    expect(reads.witnesses[0].events).toEqual(ix(br, ar));
  });

  it("with fencing off a stale read is counted but not warned about", () => {
    const { h, log } = lateRead("ok", false);
    const { results: r, warnings } = check(h, log);
    expect(r.stats.fenced_reads).toMatchObject({ stale_accepted: 1 });
    expect((r.stats.fenced_reads as { witnesses: { explanation: string }[] }).witnesses[0].explanation).toContain("fencing was off");
    expect(warnings.join("\n")).not.toContain("reads whose fence was stale");
  });

  it("a read refused though no accepted fence beat it is counted as refused falsely", () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1);
    const ar = h.read(0, "k", [2, 3], "A", 1, null, "fail");
    for (const decisions of [[read(1, 2.5, 0, "A", 1, null, false, null)], null]) {
      const { results: r, warnings } = check(h, decisions);
      expect(r.valid).toBe(true);
      const reads = r.stats.fenced_reads as { falsely_refused: number; witnesses: { events: number[] }[] };
      expect(reads.falsely_refused).toBe(1);
      expect(reads.witnesses[0].events).toEqual(ix(ar));
      expect(warnings.join("\n")).toContain("refused 1 reads");
    }
  });

  it("runs without fenced reads have no fenced_reads figures", () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1);
    h.read(0, "k", [2, 3], "A", null, null);
    const { results: r } = check(h, [read(1, 2.5, 0, "A", null, null, true, null)]);
    expect(r.stats.stale_reads_refused).toBe(0);
    expect(r.stats.fenced_reads).toBeUndefined();
  });
});
