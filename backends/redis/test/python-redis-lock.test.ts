// python-redis-lock 4.0.1 from PyPI (its hashed requirements file, the venv
// fencecheck builds from its manifest's environment) by its adapter program,
// against a real redis-server under SIGSTOP pauses aimed at holders that outlast
// its 1 s expire: its renewal thread is frozen with the holder, so the key
// lapses and the next client takes it. Without fencing the woken holder's write
// lands after the next holder's; with fences from a Redis counter the resource
// refuses it. Its renewal thread's death is told as a lost notice. Time budget:
// two runs of 9 s (about 26 s with their start and check), plus the
// environment's first build (about 10 s, once) where the suite's set-up has not
// made it.
import { describe, it, expect } from "vitest";
import { clientRun, expectResourceSafe } from "../../../test/adapters/client-run.ts";

const run = ["--client", "python-redis-lock", "--fence-source", "single", "--nemesis", "pause", "--nemesis-interval", "1", "--pause-min", "1500", "--pause-max", "2500", "--concurrency", "4", "--workers", "2", "--time-limit", "9", "--seed", "7"];

const pythonRedisLock = (...args: string[]) => clientRun([...run, ...args], "fc-prl-");

describe("--client python-redis-lock", () => {
  it("fenced by a Redis counter under pauses past its expire: valid, a stale write refused, the renewal thread's death told", async () => {
    const r = await pythonRedisLock();
    expectResourceSafe(r);
    expect(r.header).toMatchObject({ client: "python-redis-lock" });
    expect(r.log).toContain("library: python-redis-lock 4.0.1 (redis-py 8.1.0)");
    const grants = r.events.filter((e) => e.f === "acquire" && e.type === "ok").map((e) => e.value as Record<string, unknown>);
    expect(grants.length).toBeGreaterThan(10);
    expect(grants.every((g) => Number.isSafeInteger(g.fence) && g.fence_source === "single")).toBe(true);
    expect(r.results.stats.stale_writes_refused).toBeGreaterThan(0);
    expect(r.results.stats.lost_holds.holds).toBeGreaterThan(0);
    expect(r.events.some((e) => e.type === "notice" && e.f === "lost")).toBe(true);
  });

  it("unfenced under the same pauses: the woken holder's write is accepted after the next holder's (stale-write-accepted)", async () => {
    const r = await pythonRedisLock("--fence", "off");
    expect(r.exit, r.out).toBe(1);
    expect(r.results.anomaly_types).toContain("stale-write-accepted");
  });
});
