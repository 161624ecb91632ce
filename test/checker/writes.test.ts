// The write analyses, each from resource.ndjson and from the history alone.
import { describe, expect, it } from "vitest";
import { analyze } from "../../checker/index.ts";
import type { ResourceDecision, Results } from "../../store/events.ts";
import { decision, History, type OpEvents } from "./build.ts";

function check(h: History, decisions: ResourceDecision[] | null = null): Results {
  return analyze({ header: h.header, events: h.build(), decisions }).results;
}

const ix = (...ops: OpEvents[]): number[] => ops.flatMap((o) => [o.invoke.index, ...(o.done ? [o.done.index] : [])]).sort((a, b) => a - b);

/** K1: A acquires with a 5 ms lease, pauses past it; B acquires and writes; A writes late. */
function pausedHolder(lateWrite: "ok" | "fail" | "info" = "ok", bWrite: "ok" | "info" = "ok") {
  const h = new History();
  const aAcq = h.acquire(0, "k", [0, 1], "A", 1, 5);
  const bAcq = h.acquire(1, "k", [10, 11], "B", 2, 1000);
  const bw = h.write(1, "k", [12, 13], "B", 2, "b1", bWrite);
  const aw = h.write(0, "k", [20, 21], "A", 1, "a1", lateWrite);
  return { h, aAcq, bAcq, bw, aw };
}

describe("stale-write-accepted", () => {
  it("from the history: a lower fence completes after a higher one certainly took effect", () => {
    const { h, bw, aw } = pausedHolder();
    const r = check(h);
    expect(r.valid).toBe(false);
    expect(r.anomaly_types).toEqual(["stale-write-accepted"]);
    const [w] = r.anomalies["stale-write-accepted"];
    expect(w.key).toBe("k");
    expect(w.events).toEqual(ix(bw, aw));
    expect(w.explanation).toContain(`#${aw.invoke.index}`);
    expect(w.explanation).toContain("fence 1");
  });

  it("is clean when the stale write is refused", () => {
    const r = check(pausedHolder("fail").h);
    expect(r.valid).toBe(true);
    expect(r.stats.stale_writes_refused).toBe(1);
    expect(r.stats.lease_overlaps).toBe(1);
  });

  it("proves nothing from a write whose outcome is unknown", () => {
    expect(check(pausedHolder("ok", "info").h).valid).toBe(true);
    expect(check(pausedHolder("info").h).valid).toBe(true);
  });

  it("proves nothing from writes that overlap in time", () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1, 5);
    h.acquire(1, "k", [10, 11], "B", 2, 1000);
    h.write(1, "k", [12, 22], "B", 2, "b1");
    h.write(0, "k", [20, 21], "A", 1, "a1");
    expect(check(h).valid).toBe(true);
  });

  it("from resource.ndjson: the resource accepted a lower fence after a higher one", () => {
    const { h, bw, aw } = pausedHolder();
    const log = [decision(1, 12.5, "k", 1, "B", 2, null, true, "b1"), decision(2, 20.5, "k", 0, "A", 1, 2, true, "a1")];
    const r = check(h, log);
    expect(r.anomaly_types).toEqual(["stale-write-accepted"]);
    const [w] = r.anomalies["stale-write-accepted"];
    expect(w.seqs).toEqual([1, 2]);
    expect(w.events).toEqual(ix(bw, aw));
    expect(w.explanation).toMatch(/seq 2 .*fence 1.*seq 1 .*fence 2/);
  });

  it("from resource.ndjson: clean when the resource refused it", () => {
    const { h } = pausedHolder("fail");
    const log = [decision(1, 12.5, "k", 1, "B", 2, null, true, "b1"), decision(2, 20.5, "k", 0, "A", 1, 2, false, "a1")];
    const r = check(h, log);
    expect(r.valid).toBe(true);
    expect(r.stats.writes_accepted).toBe(1);
    expect(r.stats.stale_writes_refused).toBe(1);
  });

  it("uses the resource's order even where the history cannot tell", () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1, 5);
    h.acquire(1, "k", [10, 11], "B", 2, 1000);
    h.write(1, "k", [12, 22], "B", 2, "b1");
    h.write(0, "k", [20, 21], "A", 1, "a1");
    const log = [decision(1, 13, "k", 1, "B", 2, null, true, "b1"), decision(2, 20.5, "k", 0, "A", 1, 2, true, "a1")];
    expect(check(h, log).anomaly_types).toEqual(["stale-write-accepted"]);
  });

  it("keeps keys apart", () => {
    const h = new History();
    h.acquire(0, "k1", [0, 1], "A", 1);
    h.acquire(1, "k2", [0, 1], "B", 7);
    h.write(1, "k2", [2, 3], "B", 7, "b");
    h.write(0, "k1", [4, 5], "A", 1, "a");
    expect(check(h).valid).toBe(true);
  });
});

describe("interleaved-writers", () => {
  function abA(fence: (f: number) => number | null, last: "ok" | "fail" = "ok") {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", fence(1), 5);
    const a1 = h.write(0, "k", [2, 3], "A", fence(1), "a1");
    h.acquire(1, "k", [10, 11], "B", fence(2), 1000);
    const b = h.write(1, "k", [12, 13], "B", fence(2), "b1");
    const a2 = h.write(0, "k", [20, 21], "A", fence(1), "a2", last);
    return { h, a1, b, a2 };
  }

  it("from the history: A, B, A even without fences", () => {
    const { h, a1, b, a2 } = abA(() => null);
    const r = check(h);
    expect(r.anomaly_types).toEqual(["interleaved-writers"]);
    const [w] = r.anomalies["interleaved-writers"];
    expect(w.events).toEqual(ix(a1, b, a2));
    expect(w.explanation).toContain(`hold "A"`);
  });

  it("with fences the late write is also stale", () => {
    expect(check(abA((f) => f).h).anomaly_types).toEqual(["stale-write-accepted", "interleaved-writers"]);
  });

  it("is clean when the late write was refused", () => {
    expect(check(abA((f) => f, "fail").h).valid).toBe(true);
  });

  it("from resource.ndjson", () => {
    const { h, a1, b, a2 } = abA(() => null);
    const log = [
      decision(1, 2.5, "k", 0, "A", null, null, true, "a1"),
      decision(2, 12.5, "k", 1, "B", null, null, true, "b1"),
      decision(3, 20.5, "k", 0, "A", null, null, true, "a2"),
    ];
    const r = check(h, log);
    expect(r.anomaly_types).toEqual(["interleaved-writers"]);
    const [w] = r.anomalies["interleaved-writers"];
    expect(w.seqs).toEqual([1, 2, 3]);
    expect(w.events).toEqual(ix(a1, b, a2));
  });

  it("from resource.ndjson: one hold writing twice in a row is fine", () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1);
    h.write(0, "k", [2, 3], "A", 1, "a1");
    h.write(0, "k", [4, 5], "A", 1, "a2");
    const log = [decision(1, 2.5, "k", 0, "A", 1, null, true, "a1"), decision(2, 4.5, "k", 0, "A", 1, 1, true, "a2")];
    expect(check(h, log).valid).toBe(true);
  });
});

describe("false-rejection", () => {
  function newerRefused(refusedFence: number) {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 1);
    const aw = h.write(0, "k", [2, 3], "A", 1, "a1");
    h.release(0, "k", [4, 5], "A", 1);
    h.acquire(1, "k", [10, 11], "B", refusedFence);
    const bw = h.write(1, "k", [12, 13], "B", refusedFence, "b1", "fail");
    return { h, aw, bw };
  }

  it("from the history: a write refused though its fence beat every earlier one", () => {
    const { h, aw, bw } = newerRefused(2);
    const r = check(h);
    expect(r.anomaly_types).toEqual(["false-rejection"]);
    expect(r.anomalies["false-rejection"][0].events).toEqual(ix(aw, bw));
  });

  it("from the history: clean when a higher fence may have been accepted first", () => {
    const { h } = newerRefused(2);
    h.write(2, "k", [11.5], "Z", 9, "z", "open");
    expect(check(h).valid).toBe(true);
  });

  it("from resource.ndjson", () => {
    const { h, aw, bw } = newerRefused(2);
    const log = [decision(1, 2.5, "k", 0, "A", 1, null, true, "a1"), decision(2, 12.5, "k", 1, "B", 2, 1, false, "b1")];
    const r = check(h, log);
    expect(r.anomaly_types).toEqual(["false-rejection"]);
    const [w] = r.anomalies["false-rejection"];
    expect(w.seqs).toEqual([1, 2]);
    expect(w.events).toEqual(ix(aw, bw));
  });

  it("from resource.ndjson: an equal fence is rightly refused", () => {
    const { h } = newerRefused(1);
    const log = [decision(1, 2.5, "k", 0, "A", 1, null, true, "a1"), decision(2, 12.5, "k", 1, "B", 1, 1, false, "b1")];
    expect(check(h, log).anomaly_types).toEqual(["duplicate-fence"]);
  });

  it("from resource.ndjson: a fenced read counts as an accepted fence", () => {
    const { h } = newerRefused(2);
    // C's read, whose answer was lost: the log says the resource took its fence 3.
    // (The history holds every operation the resource decided: from it alone the
    // refusal is excused too, since that read may have come first.)
    h.read(2, "k", [11, 16], "C", 3, undefined, "info");
    const log = [
      decision(1, 2.5, "k", 0, "A", 1, null, true, "a1"),
      decision(2, 11.5, "k", 2, "C", 3, 1, true, "a1", "read"),
      decision(3, 12.5, "k", 1, "B", 2, 3, false, "b1"),
    ];
    expect(check(h, log).valid).toBe(true);
  });
});

describe("lost-update (counter workload)", () => {
  function counter(values: number[], last: "ok" | "info" = "ok") {
    const h = new History({ workload: "counter" });
    const writes = values.map((v, i) => {
      h.acquire(i, "c", [i * 10, i * 10 + 1], `h${i}`, i + 1);
      const w = h.write(i, "c", [i * 10 + 2, i * 10 + 3], `h${i}`, i + 1, v, i === values.length - 1 ? last : "ok");
      h.release(i, "c", [i * 10 + 4, i * 10 + 5], `h${i}`, i + 1);
      return w;
    });
    const log = values.map((v, i) => decision(i + 1, i * 10 + 2.5, "c", i, `h${i}`, i + 1, i === 0 ? null : i, true, v));
    return { h, writes, log };
  }

  it("is clean when every write is one more than the last", () => {
    const { h, log } = counter([1, 2, 3]);
    expect(check(h).valid).toBe(true);
    expect(check(h, log).valid).toBe(true);
  });

  it("from the history: a write that repeats the value before it", () => {
    const { h, writes } = counter([1, 2, 2]);
    const r = check(h);
    expect(r.anomaly_types).toEqual(["lost-update"]);
    expect(r.anomalies["lost-update"][0].events).toEqual(ix(writes[2], writes[1]));
  });

  it("from resource.ndjson", () => {
    const { h, writes, log } = counter([1, 2, 2]);
    const r = check(h, log);
    expect(r.anomaly_types).toEqual(["lost-update"]);
    const [w] = r.anomalies["lost-update"];
    expect(w.seqs).toEqual([2, 3]);
    expect(w.events).toEqual(ix(writes[1], writes[2]));
  });

  it("a never-written key reads as 0", () => {
    const { h, writes } = counter([2]);
    const r = check(h);
    expect(r.anomaly_types).toEqual(["lost-update"]);
    expect(r.anomalies["lost-update"][0].events).toEqual(ix(writes[0]));
  });

  it("a write with an unknown outcome may be the one before", () => {
    const h = new History({ workload: "counter" });
    h.write(0, "c", [0, 1], "h0", null, 1);
    h.write(1, "c", [2], "h1", null, 2, "info");
    h.write(2, "c", [10, 11], "h2", null, 3);
    expect(check(h).valid).toBe(true);
  });

  it("is not checked outside the counter workload", () => {
    const h = new History();
    h.write(0, "c", [0, 1], "h0", null, 5);
    expect(check(h).valid).toBe(true);
  });
});
