// npm run experiment -- renew --quick, as the tests of issue 14 ask (see cli.test.ts for the CLI itself).
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, runCli, processesMentioning } from "../helpers.ts";
import { quick } from "./stored.ts";

describe("npm run experiment", () => {
  it("renew --quick: both arms at each pause length, the watchdog's renews only in the renew arm, stored with its plot", async () => {
    const { store, cli, dir, results, page } = await quick("renew");
    expect(results).toMatchObject({ format: 1, kind: "experiment", name: "renew", quick: true });
    const points = results.data.points as Array<{ pause_x_ttl: number; renew: boolean; holds: number; renews: { ok: number; fail: number }; run: string }>;
    expect(points.map((p) => [p.pause_x_ttl, p.renew])).toEqual([[0.5, false], [0.5, true], [2, false], [2, true]]);
    for (const p of points) {
      expect(p.holds).toBeGreaterThan(0);
      expect(existsSync(join(dir, p.run, "history.ndjson"))).toBe(true);
      // The watchdog renews only where it runs.
      if (p.renew) expect(p.renews.ok + p.renews.fail).toBeGreaterThan(0);
      else expect(p.renews.ok + p.renews.fail).toBe(0);
    }
    expect(page).toMatch(/<svg class="xplot"/);
    expect(page).not.toMatch(/<script src=|<link [^>]*href="http/);
    expect(cli.stdout()).toMatch(/Stale writes per pause length/);
    expect(processesMentioning(store)).toEqual([]);
  });
});
