// pottery 3.0.1's Redlock from PyPI (its hashed requirements file, the venv
// fencecheck builds from its manifest's environment) by its adapter program,
// over five real redis-servers under SIGSTOP pauses aimed at holders that
// outlast auto_release_time (the 1 s TTL): a majority's keys lapse while the
// holder is frozen and the next client takes them. Without fencing the woken
// holder's write lands after the next holder's; with fences from a Redis counter
// the resource refuses it. pottery has no way to tell its holder of a lost lock
// but extend() and release() failing. Time budget: two runs of 6 s (about 20 s
// with their start and check), plus the environment's first build (about 10 s,
// once) where the suite's set-up has not made it.
import { describe, it, expect } from "vitest";
import { clientRun, expectResourceSafe } from "../../../test/adapters/client-run.ts";

const run = ["--backend", "redlock", "--client", "pottery", "--fence-source", "single", "--nemesis", "pause", "--nemesis-interval", "1", "--pause-min", "1500", "--pause-max", "2500", "--concurrency", "4", "--workers", "2", "--time-limit", "6", "--seed", "7"];

const pottery = (...args: string[]) => clientRun([...run, ...args], "fc-pottery-");

describe("--client pottery", () => {
  it("fenced by a Redis counter under pauses past its lease: valid, a stale write refused", async () => {
    const r = await pottery();
    expectResourceSafe(r);
    expect(r.header).toMatchObject({ client: "pottery" });
    expect(r.log).toContain("library: pottery 3.0.1 (redis-py 8.1.0)");
    const grants = r.events.filter((e) => e.f === "acquire" && e.type === "ok").map((e) => e.value as Record<string, unknown>);
    expect(grants.length).toBeGreaterThan(10);
    expect(grants.every((g) => Number.isSafeInteger(g.fence) && g.fence_source === "single")).toBe(true);
    expect(r.results.stats.stale_writes_refused).toBeGreaterThan(0);
  });

  it("unfenced under the same pauses: the woken holder's write is accepted after the next holder's (stale-write-accepted)", async () => {
    const r = await pottery("--fence", "off");
    expect(r.exit, r.out).toBe(1);
    expect(r.results.anomaly_types).toContain("stale-write-accepted");
  });
});
