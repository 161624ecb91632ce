// The lock server's state machine alone, on a clock the test moves: FIFO
// grants, leases that run out, a fence per grant, refusals of whoever does not
// hold the lock, the journal's replay, and the protocol's answer to bad requests.
import { describe, it, expect } from "vitest";
import { LockTable, type Answer, type Change } from "../state.ts";
import { parseRequest } from "../protocol.ts";

const replies = (as: Array<Answer<string>>): Record<string, unknown> => Object.fromEntries(as.map((a) => [a.to, a.reply]));

describe("lock server state", () => {
  it("grants waiters in the order they came, each with a fence one higher", () => {
    const t = new LockTable<string>();
    expect(replies(t.acquire("a", "k", "A", 100, 0, 0))).toEqual({ a: { ok: true, fence: 1, ttlMs: 100 } });
    // Each waiter is told at once that it took its place, and how many wait before it.
    expect(replies(t.acquire("b", "k", "B", 100, 500, 1))).toEqual({ b: { queued: true, ahead: 0 } });
    expect(replies(t.acquire("c", "k", "C", 100, 500, 2))).toEqual({ c: { queued: true, ahead: 1 } });
    expect(replies(t.acquire("d", "k", "D", 100, 0, 3))).toEqual({ d: { ok: false, error: "busy" } });
    expect(t.inspect("k")?.waiting).toEqual(["B", "C"]);
    expect(replies(t.release("a", "k", "A", 10))).toEqual({ a: { ok: true, released: true }, b: { ok: true, fence: 2, ttlMs: 100 } });
    expect(replies(t.release("b", "k", "B", 20))).toEqual({ b: { ok: true, released: true }, c: { ok: true, fence: 3, ttlMs: 100 } });
    expect(t.inspect("k")).toMatchObject({ holder: "C", fence: 3, waiting: [] });
  });

  it("a lease that runs out goes to the next waiter, and its late holder can neither renew nor release", () => {
    const t = new LockTable<string>();
    t.acquire("a", "k", "A", 100, 0, 0);
    t.acquire("b", "k", "B", 100, 1000, 50);
    expect(t.nextDeadline()).toBe(100);
    expect(replies(t.expire(100))).toEqual({ b: { ok: true, fence: 2, ttlMs: 100 } });
    expect(replies(t.renew("a", "k", "A", 100, 120))).toEqual({ a: { ok: false, error: "not-owner" } });
    expect(replies(t.release("a", "k", "A", 130))).toEqual({ a: { ok: false, error: "not-owner" } });
    expect(replies(t.renew("b", "k", "B", 300, 150))).toEqual({ b: { ok: true, ttlMs: 300 } });
    expect(t.inspect("k")).toMatchObject({ holder: "B", leaseUntil: 450 });
    // Renewed: still B's at 400, free at 450 with nobody waiting.
    expect(t.expire(400)).toEqual([]);
    expect(t.expire(450)).toEqual([]);
    expect(t.inspect("k")?.holder).toBeNull();
    expect(replies(t.acquire("c", "k", "C", 100, 0, 460))).toEqual({ c: { ok: true, fence: 3, ttlMs: 100 } });
  });

  it("a wait that runs out is answered timeout and leaves the queue; a closed connection's waits go too", () => {
    const t = new LockTable<string>();
    t.acquire("a", "k", "A", 1000, 0, 0);
    t.acquire("b", "k", "B", 100, 200, 0);
    t.acquire("c", "k", "C", 100, 900, 0);
    t.acquire("d", "k", "D", 100, 900, 0);
    expect(replies(t.expire(200))).toEqual({ b: { ok: false, error: "timeout" } });
    t.dropWaiters((w) => w === "c");
    expect(replies(t.release("a", "k", "A", 300))).toEqual({ a: { ok: true, released: true }, d: { ok: true, fence: 2, ttlMs: 100 } });
  });

  it("a release by an owner still waiting withdraws its wait: nothing is granted to it later", () => {
    const t = new LockTable<string>();
    t.acquire("a", "k", "A", 100, 0, 0);
    t.acquire("b", "k", "B", 100, 500, 1);
    t.acquire("c", "k", "C", 100, 500, 2);
    expect(replies(t.release("b2", "k", "B", 3))).toEqual({ b: { ok: false, error: "withdrawn" }, b2: { ok: true, released: false } });
    expect(replies(t.release("a", "k", "A", 10))).toEqual({ a: { ok: true, released: true }, c: { ok: true, fence: 2, ttlMs: 100 } });
  });

  it("fence gives the next number of the counter grants count, and a replay keeps it", () => {
    const changes: Change[] = [];
    const t = new LockTable<string>((c) => changes.push(c));
    t.acquire("a", "k", "A", 100, 0, 0);
    expect(replies(t.nextFence("f", "k"))).toEqual({ f: { ok: true, fence: 2 } });
    expect(replies(t.nextFence("g", "other"))).toEqual({ g: { ok: true, fence: 1 } });
    const again = new LockTable<string>();
    for (const c of changes) again.replay(c, 0);
    expect(again.inspect("k")).toMatchObject({ holder: "A", fence: 2 });
    expect(replies(again.nextFence("h", "k"))).toEqual({ h: { ok: true, fence: 3 } });
    expect(parseRequest(`{"id":9,"op":"fence"}`)).toMatchObject({ id: 9, message: "key must be a non-empty string" });
  });

  it("each key has its own holder and fence counter", () => {
    const t = new LockTable<string>();
    expect(replies(t.acquire("a", "x", "A", 100, 0, 0))).toEqual({ a: { ok: true, fence: 1, ttlMs: 100 } });
    expect(replies(t.acquire("b", "y", "B", 100, 0, 0))).toEqual({ b: { ok: true, fence: 1, ttlMs: 100 } });
  });

  it("records each change, and a replay restores holders and fences with a whole lease from the restart", () => {
    const changes: Change[] = [];
    const t = new LockTable<string>((c) => changes.push(c));
    t.acquire("a", "k", "A", 100, 0, 0);
    t.renew("a", "k", "A", 200, 10);
    t.release("a", "k", "A", 20);
    t.acquire("b", "k", "B", 100, 0, 30);
    expect(changes.map((c) => c.t)).toEqual(["grant", "renew", "release", "grant"]);
    const again = new LockTable<string>();
    for (const c of changes) again.replay(c, 5000);
    expect(again.inspect("k")).toMatchObject({ holder: "B", fence: 2, leaseUntil: 5100 });
    expect(replies(again.acquire("c", "k", "C", 100, 0, 5200))).toEqual({ c: { ok: true, fence: 3, ttlMs: 100 } });
  });
});

describe("lock server protocol", () => {
  it("answers what is wrong with a request, with its id where it has one", () => {
    expect(parseRequest("{oops")).toMatchObject({ id: null, error: "bad-request", message: "not JSON" });
    expect(parseRequest("[1]")).toMatchObject({ id: null, message: "not a JSON object" });
    expect(parseRequest(`{"op":"ping"}`)).toMatchObject({ id: null, message: "id must be a number or a string" });
    expect(parseRequest(`{"id":3,"op":"steal"}`)).toMatchObject({ id: 3, message: `op must be one of acquire, renew, release, fence, ping, got "steal"` });
    expect(parseRequest(`{"id":4,"op":"acquire","key":"k","owner":"o","ttlMs":0,"waitMs":0}`)).toMatchObject({ id: 4, message: "ttlMs must be a whole number of ms, at least 1" });
    expect(parseRequest(`{"id":5,"op":"acquire","key":"k","owner":"o","ttlMs":10}`)).toMatchObject({ id: 5, message: "waitMs must be a whole number of ms, at least 0" });
    expect(parseRequest(`{"id":6,"op":"release","key":"","owner":"o"}`)).toMatchObject({ id: 6, message: "key must be a non-empty string" });
    expect(parseRequest(`{"id":7,"op":"release","key":"k","owner":"o"}`)).toEqual({ id: 7, op: "release", key: "k", owner: "o" });
  });
});
