// npm run experiment -- fence-counters --quick, as the tests of issue 14 ask (see cli.test.ts for the CLI itself).
import { describe, it, expect } from "vitest";
import { runCli, tempRunDir, processesMentioning } from "../helpers.ts";
import { quick, stored } from "./stored.ts";

interface Cell {
  source: string; keys: number; clients: number; fences: number; fences_per_s: number; errors: Record<string, number>;
  duplicates: number; not_increasing: number; latency_ms: { p50: number; p99: number }; server_cpu_pct: number;
  state_bytes_per_fence: number | null;
}

describe("npm run experiment", () => {
  it("fence-counters --quick: every source at 1 and 100 hot keys, each fence unique per key and increasing per client, one asker per key as a working lock allows", async () => {
    const { store, cli, results, page } = await quick("fence-counters");
    const cells = results.data.cells as Cell[];
    expect(cells.map((c) => [c.source, c.keys])).toEqual([["redis", 1], ["redis", 100], ["redlock", 1], ["redlock", 100], ["etcd", 1], ["etcd", 100]]);
    for (const c of cells) {
      expect(c.fences, `${c.source} at ${c.keys} keys`).toBeGreaterThan(50);
      expect(c.errors).toEqual({});
      expect(c.duplicates).toBe(0);
      expect(c.not_increasing).toBe(0);
      expect(c.latency_ms.p99).toBeGreaterThanOrEqual(c.latency_ms.p50);
      // The servers did the work (their CPU is read from /proc, not the harness's).
      expect(c.server_cpu_pct).toBeGreaterThan(0);
      // No more askers than keys: a working lock has one holder a key.
      expect(c.clients).toBe(Math.min(16, c.keys));
    }
    // Every etcd fence is a revision kept in the db until compaction.
    for (const c of cells.filter((c) => c.source === "etcd")) expect(c.state_bytes_per_fence).toBeGreaterThan(0);
    expect(Object.keys(results.data.versions)).toEqual(["redis", "redlock", "etcd"]);
    expect(page.match(/<svg class="xplot"/g)?.length).toBe(2);
    expect(cli.stdout()).toMatch(/Every fence checked/);
    expect(processesMentioning(store)).toEqual([]);
  });

  it("fence-counters --overlap on: Redlock's max-incr asked for one key at once hands two clients the same fence", async () => {
    const store = tempRunDir("fc-exp-");
    const cli = runCli("experiment", ["fence-counters", "--quick", "--backends", "redlock", "--keys", "1", "--overlap", "on", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const [cell] = stored(store, "fence-counters").results.data.cells as Cell[];
    expect(cell).toMatchObject({ source: "redlock", keys: 1, clients: 16 });
    expect(cell.duplicates).toBeGreaterThan(0);
    expect(cli.stdout()).toMatch(/could not order their holders/);
    expect(processesMentioning(store)).toEqual([]);
  });
});
