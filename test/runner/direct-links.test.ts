// --links direct: workers reach the servers and the resource with no proxy between
// them (measurements without the proxy's hop). A run works and says so in run.json;
// a nemesis that works on links is refused, as is a Toxiproxy with nothing to do.
import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, runCli, latestRun, processesMentioning } from "../helpers.ts";

const K1 = ["--concurrency", "2", "--workers", "2", "--nemesis", "none", "--ttl", "1000", "--pause", "2500", "--pause-clients", "0",
  "--stagger", "300", "--acquire-timeout", "3000", "--rate", "0.2", "--time-limit", "1", "--work", "0", "--seed", "42", "--fence", "off"];

describe("--links direct", () => {
  it("runs without links: run.json says direct, and the paused holder's late write is still found (K1)", async () => {
    const store = tempRunDir("fc-direct-");
    const cli = runCli("test", [...K1, "--links", "direct", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(1);
    const dir = latestRun(store);
    const run = JSON.parse(readFileSync(join(dir, "run.json"), "utf8"));
    expect(run.links).toBe("direct");
    expect(JSON.parse(readFileSync(join(dir, "results.json"), "utf8")).anomaly_types).toEqual(["stale-write-accepted"]);
    expect(processesMentioning(store)).toEqual([]);
  });

  for (const [what, args, message] of [
    ["a nemesis on links", ["--nemesis", "latency"], /--links direct: --nemesis latency works on the proxied links/],
    ["a Toxiproxy", ["--nemesis", "pause", "--toxiproxy", "http://127.0.0.1:1"], /--links direct makes no links, so a Toxiproxy \(--toxiproxy\) has nothing to do/],
  ] as const)
    it(`refuses ${what}: exit 254, nothing stored`, async () => {
      const store = tempRunDir("fc-direct-");
      const cli = runCli("test", ["--links", "direct", ...args, "--store", store]);
      expect(await cli.exit).toBe(254);
      expect(cli.stderr()).toMatch(message);
    });
});
