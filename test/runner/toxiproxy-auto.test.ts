// --toxiproxy auto: a run starts Shopify's Toxiproxy (built by the suite's
// pretest, `fencecheck setup`) on a port of its own, makes its links there as
// in a user's Toxiproxy, says so in run.json, and leaves no Toxiproxy behind:
// not at its end, not after a Ctrl-C, not when the runner is SIGKILLed (its
// reaper is left to do it). Real runs, real processes, read from /proc.
import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "../../lib/index.ts";
import { TEST_OPTIONS, buildTest } from "../../runner/options.ts";
import { TOXIPROXY_VERSION } from "../../toxiproxy/index.ts";
import { jepsenRun, latestRun, processesMentioning, readNdjson, runCli, tempRunDir, waitFor } from "../helpers.ts";

const quick = ["--backend", "redis", "--concurrency", "4", "--workers", "2", "--work", "5", "--seed", "11"];

interface FaultProxy {
  server: string;
  version: string;
  url: string;
  started?: string;
}

const runJson = (store: string): { fault_proxy?: FaultProxy; links: Array<{ proxy: string }> } => JSON.parse(readFileSync(join(realpathSync(latestRun(store)), "run.json"), "utf8"));
/** The Toxiproxy processes listening where a run's said it was. */
const toxiproxyAt = (fp: FaultProxy): string[] => processesMentioning(`toxiproxy-server -host 127.0.0.1 -port ${new URL(fp.url).port}`);

describe("--toxiproxy auto", () => {
  it(`runs a partition through Toxiproxy v${TOXIPROXY_VERSION} on a port of its own, makes the links in it, records it, and stops it at the end`, async () => {
    const r = await jepsenRun([...quick, "--toxiproxy", "auto", "--nemesis", "partition", "--nemesis-interval", "1", "--fault-max", "1500", "--time-limit", "4"], "fc-auto-");
    expect([0, 1], r.output).toContain(r.exit);
    const run = runJson(r.store);
    expect(run.fault_proxy).toMatchObject({ server: "toxiproxy", version: TOXIPROXY_VERSION, started: "auto" });
    expect(run.fault_proxy!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(new URL(run.fault_proxy!.url).port).not.toBe("8474");
    // Named as a run names its proxies in a Toxiproxy of the user's.
    expect(run.links[0]!.proxy).toMatch(/^fc-\d+-worker-/);
    expect(r.history.some((e) => e.f === "start-partition")).toBe(true);
    // The links were made in that Toxiproxy, not in a proxy of ours: its own log names them.
    const log = readFileSync(join(realpathSync(latestRun(r.store)), "logs", "toxiproxy.log"), "utf8");
    expect(log).toMatch(/Starting Toxiproxy/);
    expect(log).toContain(run.links[0]!.proxy);
    expect(toxiproxyAt(run.fault_proxy!)).toEqual([]);
  });

  it("our own fault proxy is what run.json names without --toxiproxy", async () => {
    const r = await jepsenRun([...quick, "--nemesis", "none", "--time-limit", "1"], "fc-auto-");
    expect(runJson(r.store).fault_proxy).toMatchObject({ server: "fencecheck-proxy", version: expect.stringMatching(/^fencecheck-proxy /) });
  });

  it.each([
    ["SIGINT", "the runner stops it in its teardown"],
    ["SIGKILL", "the runner's reaper kills it"],
  ] as const)("%s to the runner mid-run: %s", async (signal, _how) => {
    const store = tempRunDir("fc-auto-kill-");
    const cli = runCli("test", [...quick, "--toxiproxy", "auto", "--nemesis", "latency", "--time-limit", "30", "--store", store]);
    const history = () => join(latestRun(store), "history.ndjson");
    expect(await waitFor(() => existsSync(history()) && readNdjson(history()).length > 10, 30_000), cli.stderr()).toBe(true);
    const fp = runJson(store).fault_proxy!;
    expect(toxiproxyAt(fp)).toHaveLength(1);
    process.kill(cli.child.pid!, signal);
    await cli.exit;
    expect(await waitFor(() => toxiproxyAt(fp).length === 0, 10_000), toxiproxyAt(fp).join("\n")).toBe(true);
  });

  it.each([
    [
      "--backend etcd cutting members apart: Toxiproxy lacks block_from",
      ["--backend", "etcd", "--nemesis", "partition", "--toxiproxy", "auto"],
      {},
      /--toxiproxy auto \(Toxiproxy v2\.12\.0\) does not know the block_from toxic, and --backend etcd needs it for member-to-member partitions/,
    ],
    [
      "not built, and no Go to build it with",
      ["--toxiproxy", "auto"],
      { FENCECHECK_CACHE: "/nonexistent/fc-cache", FENCECHECK_GO: "/nonexistent/go" },
      /fencecheck needs toxiproxy .* is not an executable: install Go.s release from https:\/\/go\.dev\/dl .*then run fencecheck setup --extras toxiproxy/,
    ],
    ["--links direct", ["--toxiproxy", "auto", "--links", "direct", "--nemesis", "none"], {}, /--links direct makes no links, so a Toxiproxy \(--toxiproxy\) has nothing to do/],
  ])("bad input, 254, nothing started or stored: %s", async (_, args, env, message) => {
    const store = tempRunDir("fc-auto-bad-");
    const cli = runCli("test", [...args, "--time-limit", "2", "--store", store], env);
    expect(await cli.exit, cli.stderr()).toBe(254);
    expect(cli.stderr()).toMatch(message);
    expect(readdirSync(store).filter((n) => n !== "logs")).toEqual([]);
  });

  it('"toxiproxy": "auto" in an --endpoints file means the same; a server behind a proxy of yours then needs your URL', () => {
    const dir = tempRunDir("fc-auto-endpoints-");
    const file = (servers: unknown[]): string => {
      const path = join(dir, `endpoints-${servers.length}-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(path, JSON.stringify({ toxiproxy: "auto", servers }));
      return path;
    };
    const test = buildTest(parseArgs(["--deploy", "external", "--endpoints", file([{ name: "redis-1", host: "127.0.0.1", port: 6379 }])], TEST_OPTIONS).options);
    expect([test.toxiproxy, test.toxiproxyAuto]).toEqual([null, true]);
    expect(() => buildTest(parseArgs(["--deploy", "external", "--endpoints", file([{ name: "redis-1", proxy: "redis-main" }])], TEST_OPTIONS).options)).toThrow(
      /redis-1 is behind your proxy "redis-main", and the Toxiproxy auto starts for the run has none of your proxies: give your Toxiproxy's URL/,
    );
  });
});
