// orphan-lock-node: a failed acquire whose client reports (error "orphan-node")
// that the node holding the lock was its own session's, lost track of. Flagged
// from that report alone; a plain timeout, or the code on an acquire that did not
// fail, is not.
import { describe, expect, it } from "vitest";
import { analyze } from "../../checker/index.ts";
import { History } from "./build.ts";

const check = (h: History) => analyze({ header: h.header, events: h.build(), decisions: null }).results;

describe("orphan-lock-node", () => {
  it("a failed acquire that waited behind its own session's lost node", () => {
    const h = new History();
    h.acquire(0, "k", [0, 1], "A", 4);
    h.release(0, "k", [2, 3], "A", 4);
    const lost = h.op(1, "acquire", "k", [10, 4010], { ttl_ms: 1000 }, "fail", undefined, "orphan-node");
    h.op(2, "acquire", "k", [20, 2020], { ttl_ms: 1000 }, "fail", undefined, "timeout");
    const r = check(h);
    expect(r.valid).toBe(false);
    expect(r.anomaly_types).toEqual(["orphan-lock-node"]);
    const [w] = r.anomalies["orphan-lock-node"];
    expect(w.events).toEqual([lost.invoke.index, lost.done!.index]);
    expect(w.explanation).toMatch(/acquire #\d+ \(process 1\).*orphan-node.*its own session/);
  });

  it("is clean for timeouts, and for the code where nothing failed", () => {
    const h = new History();
    h.op(1, "acquire", "k", [10, 4010], { ttl_ms: 1000 }, "fail", undefined, "timeout");
    h.op(2, "acquire", "k", [20, 30], { ttl_ms: 1000 }, "info", undefined, "orphan-node");
    expect(check(h).anomaly_types).toEqual([]);
  });
});
