// @sesamecare-oss/redlock (node-redlock's maintained fork) with its own retries,
// under SIGSTOP pauses of its clients: a Redlock lease like any other, so a paused
// holder writes after the next one (fences from --fence-source single show it),
// and fencing at the resource refuses it. Each acquire reports its validity.
import { describe, it, expect } from "vitest";
import { join } from "node:path";
import { readFileSync, realpathSync } from "node:fs";
import { tempRunDir, runCli, latestRun, readNdjson } from "../helpers.ts";

const run = ["--backend", "redlock", "--client", "sesame-redlock", "--nemesis", "pause", "--nemesis-interval", "1", "--time-limit", "8", "--seed", "3"];
const path = (store: string, file: string) => join(realpathSync(latestRun(store)), file);
const results = (store: string) => JSON.parse(readFileSync(path(store, "results.json"), "utf8"));

describe("--client sesame-redlock", () => {
  it("without fencing a paused holder's write is accepted after the next holder's; every grant reports its validity", async () => {
    const store = tempRunDir("fc-sesame-");
    const cli = runCli("test-jepsen", [...run, "--fence", "off", "--fence-source", "single", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(1);
    expect(results(store).anomaly_types).toContain("stale-write-accepted");
    const grants = readNdjson(path(store, "history.ndjson"))
      .filter((e) => e.type === "ok" && e.f === "acquire")
      .map((e) => e.value as { fence: unknown; ttl_ms: number; validity_ms: unknown });
    expect(grants.length).toBeGreaterThan(0);
    for (const g of grants) {
      expect(typeof g.fence).toBe("number");
      // Its expiration: the winning round's start + TTL - (1% of TTL + 2 ms), so at most that from now.
      expect(typeof g.validity_ms).toBe("number");
      expect(g.validity_ms).toBeLessThanOrEqual(g.ttl_ms - (0.01 * g.ttl_ms + 2));
    }
  });

  it("with fences from one Redis counter and fencing on, the run is valid", async () => {
    const store = tempRunDir("fc-sesame-");
    const cli = runCli("test-jepsen", [...run, "--fence-source", "single", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    expect(results(store).valid).toBe(true);
  });

  it("--fence on without a fence source is refused: it issues none", async () => {
    const cli = runCli("test-jepsen", [...run, "--store", tempRunDir("fc-sesame-")]);
    expect(await cli.exit).toBe(254);
    expect(cli.stderr()).toMatch(/--client sesame-redlock issues no fencing tokens/);
  });
});
