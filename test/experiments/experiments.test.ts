// Each experiment from its CLI with --quick, as the tests of issue 14 ask: stored
// under <store>/experiments/<name>/<timestamp>/ with results.json, a report.html
// that needs nothing from the network, and the runs it made; and the CLI's
// refusals (exit 254, nothing stored).
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync, readdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, runCli, processesMentioning } from "../helpers.ts";

function stored(store: string, name: string) {
  const dir = realpathSync(join(store, "experiments", name, "latest"));
  const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
  const page = readFileSync(join(dir, "report.html"), "utf8");
  return { dir, results, page };
}

describe("npm run experiment", () => {
  it("--list names every experiment; an unknown one or a bad option is refused with 254 and nothing stored", async () => {
    const list = runCli("experiment", ["--list"]);
    expect(await list.exit).toBe(0);
    expect(list.stdout()).toMatch(/^fairness +many clients/m);
    expect(list.stdout()).toMatch(/^renew +the same SIGSTOP pauses/m);
    expect(list.stdout()).toMatch(/^ttl-liveness +the holder SIGKILLed while holding/m);
    const store = tempRunDir("fc-exp-");
    const unknown = runCli("experiment", ["nope", "--store", store]);
    expect(await unknown.exit).toBe(254);
    expect(unknown.stderr()).toMatch(/no experiment named "nope"; choose from fairness, renew, ttl-liveness/);
    const bad = runCli("experiment", ["renew", "--ttl", "soon", "--store", store]);
    expect(await bad.exit).toBe(254);
    expect(bad.stderr()).toMatch(/--ttl/);
    expect(existsSync(join(store, "experiments"))).toBe(false);
  });

  it("renew --quick: both arms at each pause length, the watchdog's renews only in the renew arm, stored with its plot", async () => {
    const store = tempRunDir("fc-exp-");
    const cli = runCli("experiment", ["renew", "--quick", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const { dir, results, page } = stored(store, "renew");
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
    expect(page).toMatch(/<svg class="plot"/);
    expect(page).not.toMatch(/<script src=|<link [^>]*href="http/);
    expect(cli.stdout()).toMatch(/Stale writes per pause length/);
    expect(processesMentioning(store)).toEqual([]);
  });

  it("fairness --quick: one run per client on one key, overtakes and waits counted from its history", async () => {
    const store = tempRunDir("fc-exp-");
    const cli = runCli("experiment", ["fairness", "--quick", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const { dir, results } = stored(store, "fairness");
    const rows = results.data.rows as Array<{ client: string; fairness: { acquires_granted: number }; run: string }>;
    expect(rows.map((r) => r.client)).toEqual(["etcd-queue", "redis"]);
    for (const r of rows) {
      expect(r.fairness.acquires_granted).toBeGreaterThan(0);
      expect(existsSync(join(dir, r.run, "results.json"))).toBe(true);
    }
    expect(readdirSync(join(dir, "runs")).length).toBeGreaterThan(0);
  });

  it("ttl-liveness --quick: a SIGKILLed holder blocks the lock for about its lease, not less, not forever; the fenced runs are valid; nothing is left running", async () => {
    const store = tempRunDir("fc-exp-");
    const cli = runCli("experiment", ["ttl-liveness", "--quick", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const { dir, results, page } = stored(store, "ttl-liveness");
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
    expect(page).toMatch(/<svg class="plot"/);
    expect(cli.stdout()).toMatch(/Blocked time after the holder's SIGKILL/);
    // The servers' data goes; their logs stay.
    expect(existsSync(join(dir, "servers", "etcd-queue", "data"))).toBe(false);
    expect(existsSync(join(dir, "servers", "etcd-queue", "logs", "etcd-1.log"))).toBe(true);
    expect(processesMentioning(store)).toEqual([]);
  });
});
