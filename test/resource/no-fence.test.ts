// A hold without a fencing token (Redlock issues none) says so with
// `X-Fence-Token: none`. Fencing off: the write takes effect, logged with fence
// null. Fencing on: it is refused with 409, since the resource has nothing to
// compare; a MISSING header stays a malformed request (400), logged nowhere.
import { describe, expect, it } from "vitest";
import { raw, resourceForSuite } from "./helpers.ts";

const headers = (fence: string | null): Record<string, string> => ({ ...(fence === null ? {} : { "X-Fence-Token": fence }), "X-Lock-Owner": "o", "X-Process": "3" });

describe("a hold without a token, fencing off", () => {
  const s = resourceForSuite({ fencing: false });

  it("is accepted and logged with fence null; the key's fence does not move", async () => {
    expect(await s.client.write("k", { owner: "a", fence: 4, process: 0, data: "a" })).toEqual({ type: "ok", fence: 4 });
    expect(await s.client.write("k", { owner: "b", fence: null, process: 1, data: "b" })).toEqual({ type: "ok", fence: null });
    expect(await s.client.read("k", { process: 2 })).toEqual({ type: "ok", data: "b", fence: 4 });
    expect(s.r.decisions().map((d) => [d.op, d.owner, d.fence, d.max_before, d.accepted, d.data])).toEqual([
      ["write", "a", 4, null, true, "a"],
      ["write", "b", null, 4, true, "b"],
      ["read", "", null, 4, true, "b"],
    ]);
  });

  it("still answers 400 to a missing token, and logs nothing for it", async () => {
    const before = s.r.decisions().length;
    const a = await raw(s.r.handle.url, "PUT", "/r/m", headers(null), "1");
    expect(a.status).toBe(400);
    expect(a.json().error).toMatch(/X-Fence-Token/);
    expect(s.r.decisions().length).toBe(before);
  });
});

describe("a hold without a token, fencing on", () => {
  const s = resourceForSuite({ fencing: true });

  it("is refused with 409 'no fencing token', logged as not accepted, and changes nothing", async () => {
    expect(await s.client.write("k", { owner: "a", fence: 2, process: 0, data: "a" })).toEqual({ type: "ok", fence: 2 });
    expect(await s.client.write("k", { owner: "b", fence: null, process: 1, data: "b" })).toEqual({ type: "fail", error: "no-fence", seen: 2, got: null });
    const a = await raw(s.r.handle.url, "PUT", "/r/fresh", headers("none"), JSON.stringify("c"));
    expect(a.status).toBe(409);
    expect(a.json()).toEqual({ error: "no fencing token", seen: null, got: null });
    // The refused writes moved nothing: the next fence above 2 is still good.
    expect(await s.client.write("k", { owner: "d", fence: 3, process: 4, data: "d" })).toEqual({ type: "ok", fence: 3 });
    expect(s.r.decisions().map((d) => [d.key, d.owner, d.fence, d.max_before, d.accepted, d.data])).toEqual([
      ["k", "a", 2, null, true, "a"],
      ["k", "b", null, 2, false, "b"],
      ["fresh", "o", null, null, false, "c"],
      ["k", "d", 3, 2, true, "d"],
    ]);
  });

  it("refuses a missing token with 400, and a token that is neither a number nor none", async () => {
    for (const h of [headers(null), headers("None"), headers("null")]) {
      const a = await raw(s.r.handle.url, "PUT", "/r/z", h, "1");
      expect(a.status).toBe(400);
      expect(a.json().error).toMatch(/X-Fence-Token/);
    }
    expect(s.r.decisions().filter((d) => d.key === "z")).toEqual([]);
  });
});
