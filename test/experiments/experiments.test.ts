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
    expect(list.stdout()).toMatch(/^keys +many short-lived locks/m);
    const store = tempRunDir("fc-exp-");
    const unknown = runCli("experiment", ["nope", "--store", store]);
    expect(await unknown.exit).toBe(254);
    expect(unknown.stderr()).toMatch(/no experiment named "nope"; choose from fairness, renew, keys/);
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

  it("keys --quick: every lock loaded and counted; gone after the TTL by active expiry, or counted until a SCAN pass with lazy expiry only; etcd's leases and revisions grow by them, and compaction and defragmentation shrink the db", async () => {
    const store = tempRunDir("fc-exp-");
    const cli = runCli("experiment", ["keys", "--quick", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const { results, page } = stored(store, "keys");
    const { redis, etcd } = results.data;
    const keys = 20_000;
    expect(redis.map((r: { expiry: string }) => r.expiry)).toEqual(["active", "lazy"]);
    for (const r of redis) {
      expect(r).toMatchObject({ requested: keys, granted: keys, busy: 0, errors: {}, unanswered: 0, stopped: null, interrupted: null });
      expect(r.version).toMatch(/^\d+\.\d+/);
      // The keyspace held every lock at once: the TTL outlasts a quick load.
      expect(Math.max(...r.samples.map((s: { keys: number }) => s.keys))).toBe(keys);
      expect(r.bytes_per_key).toBeGreaterThan(50);
      expect(r.bytes_per_key).toBeLessThan(1000);
      expect(r.scan.keys_after).toBe(0);
    }
    const [active, lazy] = redis;
    // As shipped, Redis reclaimed every expired lock by itself while we only watched.
    expect(active.expiry_figures).toMatchObject({ keys_at_end: 0, reclaimed_while_watching: keys });
    expect(active.expiry_figures.empty_after_last_ttl_s).not.toBeNull();
    expect(active.scan.reclaimed).toBe(0);
    // With lazy expiry only, all stayed counted (and their memory held) until the SCAN pass touched them.
    expect(lazy.expiry_figures).toMatchObject({ keys_at_end: keys, reclaimed_while_watching: 0, expired_unreclaimed_max: keys, empty_after_last_ttl_s: null });
    expect(lazy.expiry_figures.used_memory_at_end).toBeGreaterThan(lazy.used_memory_before + keys * 50);
    expect(lazy.scan.reclaimed).toBe(keys);
    expect(lazy.scan.used_memory_after).toBeLessThan(lazy.expiry_figures.used_memory_at_end);

    expect(etcd).toMatchObject({ requested: 200, granted: 200, busy: 0, errors: {}, stopped: null, interrupted: null });
    expect(Math.max(...etcd.samples.map((s: { leases: number }) => s.leases))).toBe(200);
    expect(etcd.revision_after_load - etcd.revision_before).toBeGreaterThanOrEqual(200);
    // Each expired lease deleted its key: a revision more each.
    expect(etcd.expiry_figures).toMatchObject({ leases_at_end: 0, keys_at_end: 0 });
    expect(etcd.expiry_figures.revision_at_end - etcd.revision_before).toBeGreaterThanOrEqual(400);
    const [before, compacted, defragged] = etcd.compaction;
    expect(compacted.members[0].db_size_in_use).toBeLessThan(before.members[0].db_size_in_use);
    expect(defragged.members[0].db_size).toBeLessThan(compacted.members[0].db_size);
    expect(defragged.members[1].db_size).toBeGreaterThan(defragged.members[0].db_size);

    expect(page.match(/<svg class="plot"/g)?.length).toBe(4);
    expect(cli.stdout()).toMatch(/This machine: \d+ cores/);
    expect(processesMentioning(store)).toEqual([]);
  });
});
