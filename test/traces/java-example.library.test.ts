// examples/otel/java: Redisson's RFencedLock traced by TracedLock.java, run by
// Demo.java on its pom's jars (built as fencecheck builds a Java adapter's
// environment) against a real redis-server, with the real OpenTelemetry SDK
// exporting OTLP/HTTP protobuf to the test's receiver. `fencecheck traces` finds a
// correct run VALID hold by hold, and finds the broken one out: holds that outlive
// their 100 ms lease let the next thread in, and a store that does not check
// fences takes the older holder's late write.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { join } from "node:path";
import { REPO } from "../helpers.ts";
import { counted, exampleEnvironment, expectValidHolds, runExample, startRedis, type Redis } from "./example-run.ts";

const DIR = join(REPO, "examples", "otel", "java");
let redis: Redis;
let env: Record<string, string>;

beforeAll(async () => {
  redis = await startRedis();
  const built = await exampleEnvironment(join(DIR, "pom.xml"));
  env = built.env;
  process.stderr.write(`java example environment: ${built.built ? `built in ${built.seconds.toFixed(1)} s` : "already built"} (${built.dir})\n`);
}, 600_000);

afterAll(async () => {
  await redis?.stop();
});

const demo = (key: string, ...args: string[]) =>
  runExample(["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", env.FENCECHECK_CLASSPATH, "dev.fencecheck.examples.otel.Demo", "--key", key, ...args], DIR, env, redis, 90_000);

// The broken runs find a late write only when a hold works long enough past its
// successor's grant to write after it, which is chance: holds work 500-1500 ms
// (--hold-ms 1000 x 0.5..1.5) on a lease of 100 ms, four threads for 4 s. A
// simulation of the demo's loop (grants, polling, work) had a run with no late
// write, so nothing to find, in 3 of 10,000; with 3 threads for 3 s at --ttl-ms 200
// --hold-ms 600 it was 8 in 100.
describe("the Java OpenTelemetry example (Redisson RFencedLock)", () => {
  it("a correct run is VALID: every hold acquired, written and released in a trace of its own, one process per thread, fenced by RFencedLock's tokens", async () => {
    const r = await demo("orders/1", "--threads", "3", "--seconds", "3", "--hold-ms", "60");
    expectValidHolds(r, 3, counted(r.demo.out));
    // The tokens RFencedLock's script INCRs at each grant: one per hold, rising in the order of the grants.
    const fences = r.spans.filter((s) => s.name === "lock.acquire" && s.attributes["lock.outcome"] === "ok").map((s) => s.attributes["lock.fence"] as number);
    expect(new Set(fences).size).toBe(fences.length);
  }, 120_000);

  it("holds outliving their lease with fencing on: the store refuses the late writes, and the run is still VALID", async () => {
    const r = await demo("orders/2", "--threads", "4", "--seconds", "4", "--ttl-ms", "100", "--hold-ms", "1000");
    expect([r.code, r.out]).toEqual([0, expect.stringMatching(/^VALID/m)]);
    expect(r.spans.filter((s) => s.name === "lock.write" && s.attributes["lock.error"] === "stale-fence").length).toBeGreaterThan(0);
    expect(r.spans.some((s) => s.name === "lock.release" && s.attributes["lock.released"] === false)).toBe(true);
  }, 120_000);

  it("holds outliving their lease on a store that does not check fences: stale-write-accepted", async () => {
    const r = await demo("orders/3", "--threads", "4", "--seconds", "4", "--ttl-ms", "100", "--hold-ms", "1000", "--no-fencing");
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/^INVALID/m);
    expect(r.out).toMatch(/^ {2}(stale-write-accepted|mutex-violation) ×\d+/m);
  }, 120_000);
});
