// --backend redlock from the command line, as the user runs it: five
// Redis nodes behind per-link proxies, the default client (node-redlock), and
// partitions between workers and nodes. And the one combination it refuses.
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, runCli, latestRun, readNdjson, processesMentioning, grantsIn } from "../../../test/helpers.ts";
import { TEST_OPTIONS, buildTest } from "../../../runner/options.ts";
import { parseArgs } from "../../../lib/index.ts";

const build = (...argv: string[]) => buildTest(parseArgs(argv, TEST_OPTIONS).options);

const short = ["--concurrency", "4", "--workers", "2", "--work", "5", "--seed", "5", "--nemesis-interval", "0.5", "--fault-min", "1000", "--fault-max", "1500"];

describe("--backend redlock", () => {
  it("runs to a verdict under partitions, with them in the history and five nodes in run.json", async () => {
    const store = tempRunDir("fc-redlock-");
    const cli = runCli("test", [...short, "--backend", "redlock", "--nemesis", "partition", "--command-timeout", "700", "--time-limit", "5", "--store", store]);
    expect([0, 1], cli.stdout() + cli.stderr()).toContain(await cli.exit);
    const dir = latestRun(store);
    const events = readNdjson(join(dir, "history.ndjson")).slice(1);
    const run = JSON.parse(readFileSync(join(dir, "run.json"), "utf8"));
    expect(events.some((e) => e.f === "start-partition")).toBe(true);
    const oks = grantsIn(events) as Array<{ value: Record<string, unknown> }>;
    expect(oks.length).toBeGreaterThan(0);
    // node-redlock by default, with max-incr fences and the validity it computed.
    expect(oks.every((e) => typeof e.value.fence === "number" && typeof e.value.validity_ms === "number")).toBe(true);
    expect(run.options).toMatchObject({ backend: "redlock", client: "node-redlock", clientOptions: { fenceSource: "max-incr" } });
    expect(run.servers.map((n: { name: string }) => n.name)).toEqual(["redis-1", "redis-2", "redis-3", "redis-4", "redis-5"]);
    const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
    expect([true, false]).toContain(results.valid);
    expect(readdirSync(join(dir, "logs")).filter((f) => /^redis-\d\.log$/.test(f)).sort()).toEqual(["redis-1.log", "redis-2.log", "redis-3.log", "redis-4.log", "redis-5.log"]);
    expect(processesMentioning(store)).toEqual([]);
  });

  it("refuses --fence-source none with --fence on, saying why, before starting anything", async () => {
    const store = tempRunDir("fc-redlock-");
    const cli = runCli("test", ["--backend", "redlock", "--fence-source", "none", "--fence", "on", "--store", store]);
    expect(await cli.exit).toBe(254);
    expect(cli.stderr()).toMatch(/--fence-source none.*--fence on.*no fencing token/);
    expect(existsSync(latestRun(store))).toBe(false);
  });

  it("threads its client options, and refuses them where they mean nothing", () => {
    expect(build("--backend", "redlock")).toMatchObject({ client: "node-redlock", clientOptions: { fenceSource: "max-incr" } });
    expect(build("--backend", "redlock", "--client", "redlock", "--redlock-check-validity", "off", "--fence-source", "single").clientOptions).toEqual({
      fenceSource: "single",
      own: { "redlock-check-validity": false },
    });
    expect(build("--backend", "redlock", "--fence-source", "none", "--fence", "off").clientOptions.fenceSource).toBe("none");
    expect(build("--backend", "redis").clientOptions).toEqual({});
    expect(() => build("--backend", "redis", "--fence-source", "single")).toThrow(/--fence-source applies to the clients that make a fence from several servers' counters \(node-redlock, node-redlock-4, redlock, lockserver-majority\)/);
    expect(() => build("--backend", "redlock", "--redlock-check-validity", "off")).toThrow(/--client redlock only/);
    // The lock servers' majority manager takes a fence source too (the largest of five by default); the single server issues its own.
    expect(build("--backend", "lockserver", "--client", "lockserver-majority").clientOptions).toEqual({ fenceSource: "max-incr" });
    expect(build("--backend", "lockserver", "--client", "lockserver-majority", "--fence-source", "single").clientOptions).toEqual({ fenceSource: "single" });
    expect(() => build("--backend", "lockserver", "--fence-source", "single")).toThrow(/--client lockserver of --backend lockserver issues its own fences/);
    expect(() => build("--backend", "redlock", "--client", "redis")).toThrow(/does not work with --backend redlock/);
  });
});
