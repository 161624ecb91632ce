// The keys experiment on three etcd members: N locks as the etcd-queue client
// takes them (a lease per lock, and its key `fencecheck/queue/<name>/<lease>` put
// under the lease only if it does not exist yet), many at once; the lease count,
// the revision and the db size sampled once a second while they load and until
// their leases have expired and taken the keys with them; then a compaction to
// the current revision and a defragmentation of one member, and what each did
// to the db size.
//
// Every put is a revision and every expired lease another (its keys deleted in
// one transaction), and etcd keeps every revision until it is compacted; a
// compaction frees pages inside the db file, and only a defragmentation gives
// them back to the file system.
import { join } from "node:path";
import { mkdirSync, rmSync } from "node:fs";
import type { Etcd3 } from "etcd3";
import { ProcessGroup } from "../cluster/processes.ts";
import { PortPlan } from "../cluster/ports.ts";
import { startEtcdCluster, type EtcdMember } from "../backends/etcd/server.ts";
import { spawnProxyServer } from "../proxy/index.ts";
import { etcdClient, errorCode, hex, key, leaseSeconds, under } from "../backends/etcd/connection.ts";
import { QUEUE_PREFIX } from "../backends/etcd/queue.ts";
import { count, loadLimitReached, lockDraws, machineMemory, progress, size, rssOf, sampleEverySecond, since, type LoadOptions } from "./keys-load.ts";

export interface EtcdSample {
  t: number;
  phase: "before" | "load" | "expiry";
  revision: number;
  leases: number;
  keys: number;
  /** Of etcd-1: the db file's size, and the part of it in use. */
  db_size: number;
  db_size_in_use: number;
  /** The three members' resident memory together. */
  rss: number;
  machine_available: number | null;
}

/** One member's status at one step of the compaction. */
export interface MemberStatus {
  member: string;
  revision: number;
  db_size: number;
  db_size_in_use: number;
}

export interface EtcdKeys {
  version: string;
  requested: number;
  granted: number;
  /** Refused: the key existed already (a name drawn twice under one lease cannot; counted all the same). */
  busy: number;
  errors: Record<string, number>;
  stopped: string | null;
  load_s: number;
  locks_per_s: number;
  concurrency: number;
  revision_before: number;
  revision_after_load: number;
  leases_after_load: number;
  keys_after_load: number;
  db_size_after_load: number;
  db_size_in_use_after_load: number;
  rss_before: number;
  rss_after_load: number;
  rss_peak: number;
  /** (db in use after the load - before) / locks granted. */
  db_bytes_per_lock: number;
  /** (the members' RSS after the load - before) / locks granted, for the three together. */
  rss_bytes_per_lock: number;
  expiry_figures: {
    last_ttl_s: number;
    /** Seconds after the last TTL until no lease and no key was left, or null if some still were when watching stopped. */
    gone_after_last_ttl_s: number | null;
    /** Leases revoked per second while they expired (from the samples). */
    revoked_per_s: number;
    leases_at_end: number;
    keys_at_end: number;
    revision_at_end: number;
  };
  compaction: Array<{ step: string; members: MemberStatus[] }>;
  interrupted: string | null;
  samples: EtcdSample[];
}

/** Locks in flight at once: more did not load faster here (650/s at 100, 434/s at 300, on a busy machine). */
const CONCURRENCY = 100;

/**
 * etcd 3.4 revokes at most 1,000 expired leases a second (lessor.go,
 * leaseRevokeRate), so the watch after the last TTL lasts at least --observe and
 * up to twice what that rate needs, for the keys to be gone.
 */
const REVOKE_RATE = 1000;

export async function etcdKeys(o: LoadOptions): Promise<EtcdKeys> {
  const dir = join(o.dir, "etcd");
  mkdirSync(join(dir, "logs"), { recursive: true });
  const group = new ProcessGroup(dir);
  const clients: Etcd3[] = [];
  let sampler: ReturnType<typeof sampleEverySecond> | null = null;
  try {
    const proxy = await spawnProxyServer({ logFile: join(dir, "logs", "proxy.log") });
    group.watch(proxy.pid);
    group.onStop(() => proxy.stop());
    const cluster = await startEtcdCluster({ group, ports: new PortPlan(0), runDir: dir, toxiproxyUrl: proxy.url });
    const client = (nodes: EtcdMember[], timeoutMs: number): Etcd3 => {
      const c = etcdClient(nodes, timeoutMs);
      clients.push(c);
      return c;
    };
    const load = client(cluster.nodes, 10_000);
    // One client per member: db size is each member's own, and defragmentation is asked of one.
    const members = cluster.nodes.map((n) => ({ name: n.name, client: client([n], 120_000) }));
    const first = members[0].client;
    const version = (await first.maintenance.status()).version;
    const pids = cluster.nodes.map((n) => group.get(n.name)?.pid ?? 0);
    const statusOf = async (m: (typeof members)[number]): Promise<MemberStatus> => {
      // dbSizeInUse is in etcd 3.4's answer and etcd3's proto, not in its types.
      const s = (await m.client.maintenance.status()) as Awaited<ReturnType<Etcd3["maintenance"]["status"]>> & { dbSizeInUse?: string };
      return { member: m.name, revision: Number(s.header.revision), db_size: Number(s.dbSize), db_size_in_use: Number(s.dbSizeInUse ?? 0) };
    };

    const t0 = performance.now();
    const samples: EtcdSample[] = [];
    let phase: EtcdSample["phase"] = "before";
    const prefix = `${QUEUE_PREFIX}/`;
    const take = async (): Promise<EtcdSample> => {
      const [s, leases, keys] = await Promise.all([
        statusOf(members[0]),
        first.leaseClient.leaseLeases(),
        first.kv.range({ ...under(prefix), count_only: true }),
      ]);
      return {
        t: since(t0), phase, revision: s.revision, leases: leases.leases.length, keys: Number(keys.count),
        db_size: s.db_size, db_size_in_use: s.db_size_in_use, rss: pids.reduce((sum, p) => sum + rssOf(p), 0), machine_available: machineMemory()?.available ?? null,
      };
    };
    samples.push(await take());
    const before = samples[0];
    sampler = sampleEverySecond(take, samples);

    phase = "load";
    const draw = lockDraws(o.seed);
    const ttlS = leaseSeconds(o.ttlMs);
    const label = "keys: etcd";
    const shown = progress(o.log, label, o.keys, () => `revision ${count(samples[samples.length - 1].revision)}, db ${size(samples[samples.length - 1].db_size)}`);
    let started = 0;
    let granted = 0;
    let busy = 0;
    let lastGrantMs = 0;
    let stopped: string | null = null;
    const errors: Record<string, number> = {};
    const lockOne = async (): Promise<void> => {
      const { name, owner } = draw();
      try {
        const lease = (await load.leaseClient.leaseGrant({ TTL: ttlS })).ID;
        const k = key(`${prefix}${name}/${hex(lease)}`);
        // The etcd-queue client's own put: only if the key does not exist yet.
        const put = await load.kv.txn({
          compare: [{ key: k, target: "Create", result: "Equal", create_revision: 0 }],
          success: [{ request_put: { key: k, value: Buffer.from(owner), lease } }],
        });
        if (put.succeeded) granted++;
        else busy++;
        lastGrantMs = performance.now() - t0;
      } catch (err) {
        const code = errorCode(err);
        errors[code] = (errors[code] ?? 0) + 1;
      }
    };
    const worker = async (): Promise<void> => {
      while (started < o.keys && !stopped) {
        stopped = loadLimitReached(o.stop, t0, o.loadLimitS);
        if (stopped) return;
        started++;
        await lockOne();
        shown.update(granted);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, o.keys) }, worker));
    const loadS = (performance.now() - t0) / 1000;
    shown.end(granted);
    await sampler.now();
    const afterLoad = samples[samples.length - 1];

    // Leases are timed from their grant (its answer came by lastGrantMs).
    const lastTtlS = (lastGrantMs + ttlS * 1000) / 1000;
    phase = "expiry";
    const watchS = Math.max(o.observeS, (2 * granted) / REVOKE_RATE);
    if (!o.stop.interrupted) o.log(`${label}: every lease's TTL has passed ${Math.max(0, lastTtlS - since(t0)).toFixed(0)} s from now; then watching up to ${Math.round(watchS)} s for them to be revoked`);
    await o.stop.wait(lastTtlS * 1000 - (performance.now() - t0));
    const watchEnd = performance.now() + watchS * 1000;
    const gone = (s: EtcdSample): boolean => s.leases === 0 && s.keys === 0;
    while (!o.stop.interrupted && performance.now() < watchEnd && !gone(samples[samples.length - 1])) await o.stop.wait(1000);
    await sampler.now();
    const atEnd = samples[samples.length - 1];
    await sampler.stop();
    sampler = null;

    const compaction: EtcdKeys["compaction"] = [];
    if (!o.stop.interrupted) {
      const step = async (name: string): Promise<void> => void compaction.push({ step: name, members: await Promise.all(members.map(statusOf)) });
      await step("before compaction");
      const revision = compaction[0].members[0].revision;
      // physical: answer once the compaction is applied, so the sizes after it are its own.
      await first.kv.compact({ revision: String(revision), physical: true });
      await step(`compacted to revision ${revision}`);
      await first.maintenance.defragment();
      await step(`${members[0].name} defragmented`);
      const d = compaction[2].members[0];
      o.log(`${label}: compaction: db in use ${size(compaction[0].members[0].db_size_in_use)} -> ${size(compaction[1].members[0].db_size_in_use)}; defragmenting ${d.member}: file ${size(compaction[1].members[0].db_size)} -> ${size(d.db_size)}`);
    }

    const expiring = samples.filter((s) => s.phase === "expiry" && s.t >= lastTtlS);
    const firstGone = expiring.find(gone);
    // From the last TTL to the end of the watch: the leases etcd revoked in that time.
    const atLastTtl = [...samples].reverse().find((s) => s.t <= lastTtlS) ?? afterLoad;
    const revokeEnd = firstGone ?? atEnd;
    const revokedPerS = revokeEnd.t > lastTtlS ? (atLastTtl.leases - revokeEnd.leases) / (revokeEnd.t - lastTtlS) : 0;
    return {
      version,
      requested: o.keys,
      granted,
      busy,
      errors,
      stopped,
      load_s: Number(loadS.toFixed(2)),
      locks_per_s: loadS > 0 ? Math.round(granted / loadS) : 0,
      concurrency: CONCURRENCY,
      revision_before: before.revision,
      revision_after_load: afterLoad.revision,
      leases_after_load: afterLoad.leases,
      keys_after_load: afterLoad.keys,
      db_size_after_load: afterLoad.db_size,
      db_size_in_use_after_load: afterLoad.db_size_in_use,
      rss_before: before.rss,
      rss_after_load: afterLoad.rss,
      rss_peak: Math.max(...samples.map((s) => s.rss)),
      db_bytes_per_lock: granted ? Math.round((afterLoad.db_size_in_use - before.db_size_in_use) / granted) : 0,
      rss_bytes_per_lock: granted ? Math.round((afterLoad.rss - before.rss) / granted) : 0,
      expiry_figures: {
        last_ttl_s: Number(lastTtlS.toFixed(2)),
        gone_after_last_ttl_s: firstGone ? Number((firstGone.t - lastTtlS).toFixed(2)) : null,
        revoked_per_s: Math.round(revokedPerS),
        leases_at_end: atEnd.leases,
        keys_at_end: atEnd.keys,
        revision_at_end: atEnd.revision,
      },
      compaction,
      interrupted: o.stop.interrupted,
      samples,
    };
  } finally {
    await sampler?.stop();
    for (const c of clients) c.close();
    await group.stopAll();
    // etcd preallocates its WAL files (64 MB each): the data serves no figure once measured.
    rmSync(join(dir, "data"), { recursive: true, force: true });
  }
}
