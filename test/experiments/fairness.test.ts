// npm run experiment -- fairness --quick, as the tests of issue 14 ask (see cli.test.ts for the CLI itself).
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, runCli, processesMentioning } from "../helpers.ts";
import { quick } from "./stored.ts";

describe("npm run experiment", () => {
  it("fairness --quick: one run per client on one key, overtakes and waits counted from its history", async () => {
    const { store, cli, dir, results } = await quick("fairness");
    const rows = results.data.rows as Array<{ client: string; fairness: { acquires_granted: number }; run: string }>;
    expect(rows.map((r) => r.client)).toEqual(["etcd-queue", "redis"]);
    for (const r of rows) {
      expect(r.fairness.acquires_granted).toBeGreaterThan(0);
      expect(existsSync(join(dir, r.run, "results.json"))).toBe(true);
    }
    expect(readdirSync(join(dir, "runs")).length).toBeGreaterThan(0);
  });
});
