// Whole runs against three Hazelcast members of the run's own: a client frozen
// longer than the CP session's TTL (2 s at --ttl 2000) loses its session, and so
// its FencedLock, to another client; with FencedLock's own fence its late write is
// refused or never overtakes (VALID), and the release of the lost hold says
// "session-expired". The fenced run's members run in containers (--deploy docker)
// where a container engine answers, locally where none does: the same findings
// either way, the members meeting over the run's network instead of the fault
// proxy's links. The same run without fencing (INVALID, stale-write-accepted) is
// the libraries preset's row hazelcast-pause-fence-off (docs/locks.md): each run
// here starts nine JVMs, a large share of the suite's CPU on two cores. The
// unsafe mode's split brain is a library test (run.library.test.ts).
import { describe, it, expect } from "vitest";
import { findEngine } from "../../../docker/index.ts";
import { jepsenRun, survivors, grantsIn } from "../../../test/helpers.ts";
import { loadRun } from "../../../test/docker/engine.ts";

const engine = await findEngine().then(
  () => true,
  (err: Error) => (console.warn(`backends/hazelcast/test/run.test.ts: no container engine (${err.message}): the fenced run's members run locally`), false),
);
const docker = engine ? ["--deploy", "docker"] : [];

// Pauses of 3 to 5 s, always longer than the session TTL; fixed seeds.
const quick = ["--backend", "hazelcast", "--concurrency", "4", "--workers", "2", "--ttl", "2000", "--pause-min", "3000", "--pause-max", "5000", "--nemesis-interval", "1", "--time-limit", "15", "--nemesis", "pause"];

const sessionExpired = (history: Array<Record<string, unknown>>): number =>
  history.filter((e) => e.f === "release" && e.type === "ok" && (e.value as { lost?: string } | undefined)?.lost === "session-expired").length;

describe("hazelcast runs", () => {
  it(`FencedLock under pauses with its own fence${engine ? ", members in containers" : ""}: VALID, though sessions were lost and holds overlapped`, async () => {
    const r = await jepsenRun([...quick, ...docker, "--fence", "on", "--seed", "1"], "fc-hz-");
    expect(r.exit, r.output).toBe(0);
    expect(r.output).toMatch(/^VALID /m);
    expect((r.results as { stats?: { lease_overlaps: number } } | null)?.stats?.lease_overlaps).toBeGreaterThanOrEqual(1);
    expect(sessionExpired(r.history)).toBeGreaterThanOrEqual(1);
    // Fences from the lock, each grant its own.
    const fences = grantsIn(r.history).map((e) => (e.value as { fence: number }).fence);
    expect(fences.length).toBeGreaterThan(3);
    expect(new Set(fences).size).toBe(fences.length);
    if (engine) expect(Object.keys(loadRun(r.store).run.deployment.containers).sort()).toEqual(["hz-1", "hz-2", "hz-3"]);
    expect(await survivors(r.store)).toEqual([]);
  }, 120_000);
});
