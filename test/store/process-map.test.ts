// run.json's `processes` (store/process-map.ts): recorded as events arrive from
// each worker, replaced processes included, and read back without trusting it.
import { describe, expect, it } from "vitest";
import { isWorker, linkWorker, processMapOf, ProcessMapRecorder } from "../../store/process-map.ts";

describe("the process -> worker map", () => {
  it("records the worker that sent a process's first event, and a process that replaced a retired one", () => {
    const r = new ProcessMapRecorder((p) => p % 3);
    r.observe("worker-1", [{ process: 0 }, { process: "nemesis" }, { process: 2 }]);
    r.observe("worker-2", [{ process: 1 }]);
    // Client 0 retired process 0 after an info and carries on as 0 + 3.
    r.observe("worker-1", [{ process: 3 }, { process: 0 }]);
    expect(r.toJSON()).toEqual({
      "0": { worker: "worker-1", client: 0 },
      "1": { worker: "worker-2", client: 1 },
      "2": { worker: "worker-1", client: 2 },
      "3": { worker: "worker-1", client: 0 },
    });
    expect(Object.keys(r.toJSON())).toEqual(["0", "1", "2", "3"]);
  });

  it("reads a map back, leaving out what is not a process with its worker and client, and says so", () => {
    const warnings: string[] = [];
    const map = processMapOf({ processes: { "0": { worker: "worker-1", client: 0 }, x: { worker: "w", client: 1 }, "2": { worker: 5, client: 2 } } }, warnings);
    expect(map).toEqual({ "0": { worker: "worker-1", client: 0 } });
    expect(warnings).toEqual([expect.stringMatching(/2 entries of "processes"/)]);
    expect(processMapOf({ test: "t" })).toBeNull();
    expect(processMapOf(null)).toBeNull();
    const bad: string[] = [];
    expect(processMapOf({ processes: [1] }, bad)).toBeNull();
    expect(bad).toEqual([expect.stringMatching(/not an object/)]);
  });

  it("tells links and workers from servers among a fault's targets", () => {
    expect(linkWorker("worker-1->redis-2")).toBe("worker-1");
    expect(linkWorker("redis-2")).toBeNull();
    expect(isWorker("worker-3", new Set())).toBe(true);
    expect(isWorker("clients-a", new Set(["clients-a"]))).toBe(true);
    expect(isWorker("redis-1", new Set(["worker-1"]))).toBe(false);
  });
});
