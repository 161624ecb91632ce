// A malformed request is a client bug: the resource answers 4xx naming what is
// wrong, and neither its state nor its log moves.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { raw, runResource, type Running } from "./helpers.ts";

const good = { "X-Fence-Token": "10", "X-Lock-Owner": "o", "X-Process": "1" };
const without = (name: string): Record<string, string> => Object.fromEntries(Object.entries(good).filter(([k]) => k !== name));
const big = JSON.stringify("x".repeat(64 * 1024));

interface Case {
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  chunked?: boolean;
  status: number;
  /** A fragment the error message must contain. */
  says: RegExp;
}

const cases: Case[] = [
  { name: "missing token", method: "PUT", path: "/r/k", headers: without("X-Fence-Token"), body: "1", status: 400, says: /X-Fence-Token/ },
  { name: "token not a number", method: "PUT", path: "/r/k", headers: { ...good, "X-Fence-Token": "ten" }, body: "1", status: 400, says: /X-Fence-Token/ },
  { name: "token not an integer", method: "PUT", path: "/r/k", headers: { ...good, "X-Fence-Token": "10.5" }, body: "1", status: 400, says: /X-Fence-Token/ },
  { name: "negative token", method: "PUT", path: "/r/k", headers: { ...good, "X-Fence-Token": "-3" }, body: "1", status: 400, says: /X-Fence-Token/ },
  { name: "token past 2^53", method: "PUT", path: "/r/k", headers: { ...good, "X-Fence-Token": "99999999999999999999" }, body: "1", status: 400, says: /X-Fence-Token/ },
  { name: "empty token", method: "PUT", path: "/r/k", headers: { ...good, "X-Fence-Token": "" }, body: "1", status: 400, says: /X-Fence-Token/ },
  { name: "missing owner", method: "PUT", path: "/r/k", headers: without("X-Lock-Owner"), body: "1", status: 400, says: /X-Lock-Owner/ },
  { name: "empty owner", method: "PUT", path: "/r/k", headers: { ...good, "X-Lock-Owner": "" }, body: "1", status: 400, says: /X-Lock-Owner/ },
  { name: "missing process", method: "PUT", path: "/r/k", headers: without("X-Process"), body: "1", status: 400, says: /X-Process/ },
  { name: "process not an integer", method: "PUT", path: "/r/k", headers: { ...good, "X-Process": "p1" }, body: "1", status: 400, says: /X-Process/ },
  { name: "body declared JSON but not JSON", method: "PUT", path: "/r/k", headers: { ...good, "Content-Type": "application/json" }, body: "{nope", status: 400, says: /not JSON/ },
  { name: "empty body declared JSON", method: "PUT", path: "/r/k", headers: { ...good, "Content-Type": "application/json; charset=utf-8" }, body: "", status: 400, says: /not JSON/ },
  { name: "body over 64 KiB, with a length", method: "PUT", path: "/r/k", headers: good, body: big, status: 400, says: /larger than 65536/ },
  { name: "body over 64 KiB, chunked", method: "PUT", path: "/r/k", headers: good, body: big, chunked: true, status: 400, says: /larger than 65536/ },
  { name: "empty key", method: "PUT", path: "/r/", headers: good, body: "1", status: 400, says: /bad key/ },
  { name: "key with a slash", method: "PUT", path: "/r/a/b", headers: good, body: "1", status: 400, says: /bad key/ },
  { name: "key with an escaped slash", method: "PUT", path: "/r/a%2Fb", headers: good, body: "1", status: 400, says: /bad key/ },
  { name: "key with a space", method: "GET", path: "/r/a%20b", headers: good, status: 400, says: /bad key/ },
  { name: "key with a bad escape", method: "GET", path: "/r/a%zz", headers: good, status: 400, says: /bad key/ },
  { name: "key too long", method: "PUT", path: `/r/${"k".repeat(201)}`, headers: good, body: "1", status: 400, says: /bad key/ },
  { name: "read with a bad token", method: "GET", path: "/r/k", headers: { ...good, "X-Fence-Token": "x" }, status: 400, says: /X-Fence-Token/ },
  { name: "fenced read without process", method: "GET", path: "/r/k", headers: without("X-Process"), status: 400, says: /X-Process/ },
  { name: "unknown route", method: "GET", path: "/nothing", headers: good, status: 404, says: /no such route/ },
  { name: "route without key part", method: "PUT", path: "/r", headers: good, body: "1", status: 404, says: /no such route/ },
  { name: "DELETE a key", method: "DELETE", path: "/r/k", headers: good, status: 405, says: /DELETE/ },
  { name: "POST a key", method: "POST", path: "/r/k", headers: good, body: "1", status: 405, says: /POST/ },
  { name: "PUT the metrics", method: "PUT", path: "/metrics", headers: good, body: "1", status: 405, says: /PUT/ },
];

describe("malformed requests", () => {
  let r: Running;
  beforeAll(async () => {
    r = await runResource({ fencing: true });
    const first = await raw(r.handle.url, "PUT", "/r/k", { ...good, "X-Fence-Token": "5" }, JSON.stringify("good"));
    expect(first.status).toBe(200);
  });
  afterAll(() => r.close());

  it.each(cases)("$name: answers $status and changes nothing", async (c) => {
    const logBefore = r.logText();
    const a = await raw(r.handle.url, c.method, c.path, c.headers, c.body, { chunked: c.chunked });
    expect(a.status).toBe(c.status);
    expect(a.headers["content-type"]).toBe("application/json");
    expect(String(a.json().error)).toMatch(c.says);
    if (c.status === 405) expect(a.headers.allow).toBeTruthy();
    expect(r.logText()).toBe(logBefore);
  });

  it("left the key as the one good write made it", async () => {
    // Several refused writes carried fence 10; had any counted, 6 would be stale now.
    const read = await raw(r.handle.url, "GET", "/r/k", { "X-Process": "2" });
    expect(read.json()).toEqual({ data: "good", fence: 5 });
    const next = await raw(r.handle.url, "PUT", "/r/k", { ...good, "X-Fence-Token": "6" }, "2");
    expect(next.status).toBe(200);
    expect(r.decisions().map((d) => [d.seq, d.op, d.fence, d.accepted])).toEqual([
      [1, "write", 5, true],
      [2, "read", null, true],
      [3, "write", 6, true],
    ]);
  });
});
