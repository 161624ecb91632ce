// Reads are decisions too: each is logged with the value it returned. With
// --fence-reads a read that carries a fence advances the key's fence, which is what
// closes the lost update of a counter under fencing (scenario C1 of docs/experiments.md).
import { describe, expect, it } from "vitest";
import { ResourceClient } from "../../clients/resource.ts";
import { metricValue, raw, resourceForSuite, runResource } from "./helpers.ts";

describe("reads without --fence-reads", () => {
  const s = resourceForSuite({ fencing: true });

  it("logs each read with its owner, fence and the value returned, and moves no fence", async () => {
    await s.client.write("c", { owner: "a", fence: 1, process: 0, data: 0 });
    expect(await s.client.read("c", { process: 0, owner: "a", fence: 1 })).toEqual({ type: "ok", data: 0, fence: 1 });
    // A newer fence on a read is only recorded,
    expect(await s.client.read("c", { process: 1, owner: "b", fence: 2 })).toEqual({ type: "ok", data: 0, fence: 1 });
    // and so is a stale one: reads are always accepted here.
    expect(await s.client.read("c", { process: 3, fence: 0 })).toEqual({ type: "ok", data: 0, fence: 1 });
    expect(s.r.decisions().map(({ seq, time: _t, ...d }) => [seq, d])).toEqual([
      [1, { op: "write", key: "c", process: 0, owner: "a", fence: 1, max_before: null, accepted: true, data: 0, fencing: true }],
      [2, { op: "read", key: "c", process: 0, owner: "a", fence: 1, max_before: 1, accepted: true, data: 0, fencing: true }],
      [3, { op: "read", key: "c", process: 1, owner: "b", fence: 2, max_before: 1, accepted: true, data: 0, fencing: true }],
      [4, { op: "read", key: "c", process: 3, owner: "", fence: 0, max_before: 1, accepted: true, data: 0, fencing: true }],
    ]);
  });

  it("lets the older hold win the race when the newer one has only read", async () => {
    // C1 exactly: a (fence 10) and b (fence 11) both read 0; a writes 1 first.
    await s.client.read("c1", { process: 0, owner: "a", fence: 10 });
    await s.client.read("c1", { process: 1, owner: "b", fence: 11 });
    expect(await s.client.write("c1", { owner: "a", fence: 10, process: 0, data: 1 })).toEqual({ type: "ok", fence: 10 });
    expect(await s.client.write("c1", { owner: "b", fence: 11, process: 1, data: 1 })).toEqual({ type: "ok", fence: 11 });
    // Two increments, one effect: the lost update that fenced reads prevent.
    expect(await s.client.read("c1", { process: 2 })).toMatchObject({ data: 1 });
  });
});

describe("reads with --fence-reads", () => {
  const s = resourceForSuite({ fencing: true, fenceReads: true });

  it("closes C1: the newer hold's read makes the older hold's write stale", async () => {
    expect(await s.client.read("c", { process: 0, owner: "a", fence: 10 })).toEqual({ type: "ok", data: null, fence: 10 });
    expect(await s.client.read("c", { process: 1, owner: "b", fence: 11 })).toEqual({ type: "ok", data: null, fence: 11 });
    expect(await s.client.write("c", { owner: "a", fence: 10, process: 0, data: 1 })).toEqual({
      type: "fail",
      error: "stale-fence",
      seen: 11,
      got: 10,
    });
    // The hold that read with 11 can write with 11: its own read does not make it stale,
    expect(await s.client.write("c", { owner: "b", fence: 11, process: 1, data: 1 })).toEqual({ type: "ok", fence: 11 });
    // and it can read again with the same fence,
    expect(await s.client.read("c", { process: 1, owner: "b", fence: 11 })).toEqual({ type: "ok", data: 1, fence: 11 });
    // but not write with it twice, as without fenced reads.
    expect(await s.client.write("c", { owner: "b", fence: 11, process: 1, data: 2 })).toMatchObject({ type: "fail", seen: 11, got: 11 });
    // A read with an older fence is refused, logged as refused, and returns nothing.
    expect(await s.client.read("c", { process: 0, owner: "a", fence: 10 })).toEqual({ type: "fail", error: "stale-fence", seen: 11, got: 10 });
    // A read without a fence is an observer: always answered, moves nothing.
    expect(await s.client.read("c", { process: 7 })).toEqual({ type: "ok", data: 1, fence: 11 });

    expect(s.r.decisions().map((d) => [d.op, d.owner, d.fence, d.max_before, d.accepted, d.data])).toEqual([
      ["read", "a", 10, null, true, null],
      ["read", "b", 11, 10, true, null],
      ["write", "a", 10, 11, false, 1],
      ["write", "b", 11, 11, true, 1],
      ["read", "b", 11, 11, true, 1],
      ["write", "b", 11, 11, false, 2],
      ["read", "a", 10, 11, false, null],
      ["read", "", null, 11, true, 1],
    ]);
  });

  it("with fencing off, accepts everything and still records the fences reads carried", async () => {
    const off = await runResource({ fencing: false, fenceReads: true });
    const c = new ResourceClient(off.handle.url);
    try {
      await c.read("c", { process: 0, owner: "b", fence: 11 });
      expect(await c.write("c", { owner: "a", fence: 10, process: 1, data: 1 })).toEqual({ type: "ok", fence: 10 });
      expect(await c.read("c", { process: 2, owner: "a", fence: 3 })).toEqual({ type: "ok", data: 1, fence: 11 });
      expect(off.decisions().map((d) => [d.op, d.fence, d.max_before, d.accepted, d.fencing])).toEqual([
        ["read", 11, null, true, false],
        ["write", 10, 11, true, false],
        ["read", 3, 11, true, false],
      ]);
    } finally {
      c.close();
      await off.close();
    }
  });
});

describe("requests from outside the run (curl, a dashboard)", () => {
  const s = resourceForSuite({ fencing: true });

  it("a GET without X-Process is answered with the value and the fence, counted, and not logged", async () => {
    await s.client.write("o", { owner: "a", fence: 4, process: 0, data: "v" });
    const before = s.r.logText();
    const a = await raw(s.r.handle.url, "GET", "/r/o", {});
    expect(a.status).toBe(200);
    expect(a.json()).toEqual({ data: "v", fence: 4 });
    expect(s.r.logText()).toBe(before);
    const m = await raw(s.r.handle.url, "GET", "/metrics", {});
    expect(metricValue(m.text, "resource_reads_total")).toBe(1);
  });

  it("a body that is not JSON, sent without Content-Type application/json, is written as its text", async () => {
    const headers = { "X-Fence-Token": "5", "X-Lock-Owner": "a", "X-Process": "0" };
    const a = await raw(s.r.handle.url, "PUT", "/r/o", headers, "hello world");
    expect(a.status).toBe(200);
    expect(s.r.decisions().at(-1)).toMatchObject({ op: "write", key: "o", fence: 5, accepted: true, data: "hello world" });
    // A JSON body is still its value.
    expect((await raw(s.r.handle.url, "PUT", "/r/o", { ...headers, "X-Fence-Token": "6" }, "41")).status).toBe(200);
    expect(s.r.decisions().at(-1)).toMatchObject({ fence: 6, data: 41 });
    expect((await raw(s.r.handle.url, "GET", "/r/o", {})).json()).toEqual({ data: 41, fence: 6 });
  });
});
