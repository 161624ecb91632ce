// npm run experiment -- ttl-liveness --quick, as the tests of issue 14 ask (see cli.test.ts for the CLI itself).
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, runCli, processesMentioning } from "../helpers.ts";
import { quick } from "./stored.ts";

describe("npm run experiment", () => {
  it("ttl-liveness --quick: a SIGKILLed holder blocks the lock for about its lease, not less, not forever; the fenced runs are valid; nothing is left running", async () => {
    const { store, cli, dir, results, page } = await quick("ttl-liveness");
    expect(results).toMatchObject({ name: "ttl-liveness", quick: true });
    type Trial = { client: string; ttl_ms: number; lease_ms: number; lease_granted_s?: number; blocked_ms: number | null; holder_fence: number; waiter_fence: number; error?: string };
    const trials = results.data.trials as Trial[];
    expect(trials.map((t) => [t.client, t.ttl_ms])).toEqual([["redis", 1000], ["etcd-queue", 1000]]);
    for (const t of trials) {
      expect(t.error, JSON.stringify(t)).toBeUndefined();
      // A lock freed by the kill (a release on the way out, a lease not kept on the
      // servers) would let the waiter in at once; one never freed would time it out.
      expect(t.blocked_ms!, JSON.stringify(t)).toBeGreaterThanOrEqual(0.5 * t.lease_ms);
      expect(t.blocked_ms!, JSON.stringify(t)).toBeLessThan(t.lease_ms + 3000);
      expect(t.waiter_fence).toBeGreaterThan(t.holder_fence);
    }
    // etcd's lease as the member granted it: whole seconds.
    expect(trials[1].lease_granted_s).toBe(1);
    const fenced = results.data.fenced as Array<{ client: string; valid: boolean | string; holds: number; run: string }>;
    expect(fenced.map((f) => [f.client, f.valid])).toEqual([["redis", true], ["etcd-queue", true]]);
    for (const f of fenced) {
      expect(f.holds).toBeGreaterThan(0);
      expect(existsSync(join(dir, f.run, "results.json"))).toBe(true);
    }
    expect(page).toMatch(/<svg class="xplot"/);
    expect(cli.stdout()).toMatch(/Blocked time after the holder's SIGKILL/);
    // The servers' data goes; their logs stay.
    expect(existsSync(join(dir, "servers", "etcd-queue", "data"))).toBe(false);
    expect(existsSync(join(dir, "servers", "etcd-queue", "logs", "etcd-1.log"))).toBe(true);
    expect(processesMentioning(store)).toEqual([]);
  });
});
