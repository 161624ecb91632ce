// Format 2 notices: read beside the operations without being one, refused in a
// format 1 history, and counted per hold certainly lost (stats.lost_holds).
import { describe, it, expect } from "vitest";
import { checkRun } from "../../checker/index.ts";
import { readHistory } from "../../store/reader.ts";
import { History, writeRun } from "./build.ts";

/** Two holds of k0: c1's hold is certainly lost once c2's acquire, invoked after c1's ok, returns ok while c1 still holds. */
function lostHold(told: "owner" | "key" | "none" | "late-release"): History {
  const h = new History({ format: 2, lock: "mutex", client: "./x.adapter.json" });
  h.acquire(1, "k0", [0, 10], "c1a1-h1", null);
  h.write(1, "k0", [20, 25], "c1a1-h1", null, 1);
  h.acquire(2, "k0", [1200, 1300], "c2a1-h1", null);
  if (told === "owner") h.notice(1, 1500, "lost", "k0", "c1a1-h1");
  if (told === "key") h.notice(1, 1250, "lost", "k0");
  if (told !== "late-release") h.notice(1, 1100, "suspended");
  if (told === "late-release") h.release(1, "k0", [1400, 1410], "c1a1-h1", null);
  h.release(2, "k0", [1600, 1610], "c2a1-h1", null);
  return h;
}

describe("notices (format 2)", () => {
  it("are read apart from the operations, and the history checks as without them", async () => {
    const dir = writeRun(lostHold("owner"));
    const read = await readHistory(`${dir}/history.ndjson`);
    expect(read.notices.map((n) => n.f)).toEqual(["suspended", "lost"]);
    expect(read.events.some((e) => e.type === "notice")).toBe(false);
    const { results } = await checkRun(dir);
    expect(results.valid).toBe(true);
    expect(results.stats.ops).toEqual({ acquire: { ok: 2, fail: 0, info: 0 }, write: { ok: 1, fail: 0, info: 0 }, release: { ok: 1, fail: 0, info: 0 } });
  });

  it("lost_holds: a hold named by its owner is told, 200 ms after the other grant returned", async () => {
    const { results } = await checkRun(writeRun(lostHold("owner")));
    expect(results.stats.lost_holds).toEqual({ holds: 1, told: 1, told_after_ms: { p50: 200, p99: 200, max: 200 }, untold: [] });
  });

  it("lost_holds: a notice naming only the key counts for the process's hold of it; told before the grant returned is negative", async () => {
    const { results } = await checkRun(writeRun(lostHold("key")));
    expect(results.stats.lost_holds).toMatchObject({ holds: 1, told: 1, told_after_ms: { p50: -50 } });
  });

  it("lost_holds: a hold never told is listed by owner; a hold released after the other grant is lost too", async () => {
    expect((await checkRun(writeRun(lostHold("none")))).results.stats.lost_holds).toEqual({ holds: 1, told: 0, told_after_ms: null, untold: ["c1a1-h1"] });
    expect((await checkRun(writeRun(lostHold("late-release")))).results.stats.lost_holds).toMatchObject({ holds: 1, told: 0 });
  });

  it("lost_holds: a hold released before the next acquire returned is not lost", async () => {
    const h = new History({ format: 2 });
    h.acquire(1, "k0", [0, 10], "a", null);
    h.release(1, "k0", [50, 60], "a", null);
    h.acquire(2, "k0", [40, 70], "b", null);
    expect((await checkRun(writeRun(h))).results.stats.lost_holds).toEqual({ holds: 0, told: 0, told_after_ms: null, untold: [] });
  });

  it("format 1 runs have no lost_holds: the question does not apply", async () => {
    const h = new History();
    h.acquire(1, "k0", [0, 10], "a", 1);
    expect((await checkRun(writeRun(h))).results.stats.lost_holds).toBeUndefined();
  });

  it("a notice in a format 1 history, a bad notice and an unknown lock kind are refused naming the line", async () => {
    const h1 = new History();
    h1.acquire(1, "k0", [0, 10], "a", 1);
    h1.notice(1, 20, "lost", "k0", "a");
    await expect(checkRun(writeRun(h1))).rejects.toThrow(/history\.ndjson line 4: a notice line needs a format 2 history \(the header says format 1\)/);
    const h2 = new History({ format: 2 });
    h2.acquire(1, "k0", [0, 10], "a", 1);
    const bad = h2.ndjson().trimEnd() + "\n" + JSON.stringify({ index: 2, time: 3e7, process: 1, type: "notice", f: "gone" }) + "\n";
    await expect(checkRun(writeRun(bad))).rejects.toThrow(/line 4: a notice's "f" must be one of lost, suspended, reconnected/);
    const odd = new History({ format: 2, lock: "barrier" });
    odd.acquire(1, "k0", [0, 10], "a", 1);
    await expect(checkRun(writeRun(odd))).rejects.toThrow(/line 1: header "lock" "barrier" is not a lock kind \(mutex, reentrant, rw, semaphore\)/);
    const noPermits = new History({ format: 2, lock: "semaphore" });
    noPermits.acquire(1, "k0", [0, 10], "a", 1);
    await expect(checkRun(writeRun(noPermits))).rejects.toThrow(/line 1: header "permits" must be an integer >= 1 for a semaphore/);
    const format1 = new History({ lock: "rw" });
    format1.acquire(1, "k0", [0, 10], "a", 1);
    await expect(checkRun(writeRun(format1))).rejects.toThrow(/line 1: header "lock" and "permits" need format 2/);
    const f3 = new History({ format: 3 as 2 });
    await expect(checkRun(writeRun(f3))).rejects.toThrow(/"format" 3 is not supported \(this reader knows formats 1 and 2\)/);
  });
});
