// npm run experiment -- keys --quick, as the tests of issue 14 ask (see cli.test.ts for the CLI itself).
import { describe, it, expect } from "vitest";
import { processesMentioning } from "../helpers.ts";
import { quick } from "./stored.ts";

describe("npm run experiment", () => {
  it("keys --quick: every lock loaded and counted; gone after the TTL by active expiry, or counted until a SCAN pass with lazy expiry only; etcd's leases and revisions grow by them, and compaction and defragmentation shrink the db", async () => {
    const { store, cli, results, page } = await quick("keys");
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

    expect(page.match(/<svg class="xplot"/g)?.length).toBe(4);
    expect(cli.stdout()).toMatch(/This machine: \d+ cores/);
    expect(processesMentioning(store)).toEqual([]);
  });
});
