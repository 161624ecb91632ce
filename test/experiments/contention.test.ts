// npm run experiment -- contention --quick, as the tests of issue 14 ask (see cli.test.ts for the CLI itself).
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, runCli, processesMentioning } from "../helpers.ts";
import { quick } from "./stored.ts";

describe("npm run experiment", () => {
  it("contention --quick: a run per contender count with no proxy, throughput against a ceiling from one contender's parts, corrected latencies, the harness's CPU and the server's apart", async () => {
    const { store, cli, dir, results, page } = await quick("contention");
    expect(results.data.links).toBe("direct");
    const rows = results.data.rows as Array<{ contenders: number; grants: number; grants_per_s: number; ceiling_per_s: number; acquire_ms: { p50: number; p99: number }; acquire_corrected_ms: { p99: number; samples: number }; harness_cpu: { samples: number } | null; parts_ms: Record<string, number>; run: string }>;
    expect(rows.map((r) => r.contenders)).toEqual([10]);
    for (const r of rows) {
      expect(r.grants).toBeGreaterThan(1);
      expect(r.grants_per_s).toBeGreaterThan(0);
      // The ceiling comes from measured parts: every one a real, positive time.
      for (const v of Object.values(r.parts_ms)) expect(v).toBeGreaterThanOrEqual(0);
      expect(r.ceiling_per_s).toBeGreaterThan(0);
      expect(r.acquire_ms.p99).toBeGreaterThanOrEqual(r.acquire_ms.p50);
      // The correction only ever adds samples, and none above the measured maximum.
      expect(r.acquire_corrected_ms.samples).toBeGreaterThanOrEqual(r.grants);
      expect(r.harness_cpu?.samples).toBeGreaterThan(0);
      // The server's CPU apart from the harness's: ten clients spinning on SET NX keep redis-server busy.
      expect((r.harness_cpu as unknown as { servers: { samples: number; peak_pct: number } }).servers).toMatchObject({ samples: r.harness_cpu!.samples });
      expect((r.harness_cpu as unknown as { servers: { peak_pct: number } }).servers.peak_pct).toBeGreaterThan(0);
      // Every worker said how late its event loop ran: a figure, not a gap.
      expect((r as unknown as { event_loop_delay_ms: { p99: number } | null }).event_loop_delay_ms?.p99).toBeGreaterThanOrEqual(0);
      const run = JSON.parse(readFileSync(join(dir, r.run, "run.json"), "utf8"));
      expect(run.links).toBe("direct");
    }
    expect(page.match(/<svg class="xplot"/g)?.length).toBe(5);
    expect(processesMentioning(store)).toEqual([]);
  });
});
