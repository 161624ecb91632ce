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
    expect(list.stdout()).toMatch(/^contention +one hot key/m);
    const store = tempRunDir("fc-exp-");
    const unknown = runCli("experiment", ["nope", "--store", store]);
    expect(await unknown.exit).toBe(254);
    expect(unknown.stderr()).toMatch(/no experiment named "nope"; choose from fairness, renew, contention/);
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
    expect(page).toMatch(/<svg class="xplot"/);
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

  it("contention --quick: a run per contender count with no proxy, throughput against a ceiling from one contender's parts, corrected latencies, the harness's CPU", async () => {
    const store = tempRunDir("fc-exp-");
    const cli = runCli("experiment", ["contention", "--quick", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const { dir, results, page } = stored(store, "contention");
    expect(results.data.links).toBe("direct");
    const rows = results.data.rows as Array<{ contenders: number; grants: number; grants_per_s: number; ceiling_per_s: number; acquire_ms: { p50: number; p99: number }; acquire_corrected_ms: { p99: number; samples: number }; harness_cpu: { samples: number } | null; parts_ms: Record<string, number>; run: string }>;
    expect(rows.map((r) => r.contenders)).toEqual([5, 20]);
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
      // Every worker said how late its event loop ran: a figure, not a gap.
      expect((r as unknown as { event_loop_delay_ms: { p99: number } | null }).event_loop_delay_ms?.p99).toBeGreaterThanOrEqual(0);
      const run = JSON.parse(readFileSync(join(dir, r.run, "run.json"), "utf8"));
      expect(run.links).toBe("direct");
    }
    expect(page.match(/<svg class="xplot"/g)?.length).toBe(4);
    expect(processesMentioning(store)).toEqual([]);
  });
});
