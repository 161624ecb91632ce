// keys: what many short-lived locks cost a lock server, and what becomes of them
// when they expire (issue 14). Ten million locks drawn from a seed go into one
// redis-server with the lock's own SET NX PX, pipelined: time to load, memory per
// lock, and how many keys the keyspace still counts after their TTLs, with
// Redis's active expiry as shipped and with only lazy expiry (on access). A
// smaller number go into three etcd members the way the etcd-queue client takes
// them, a lease each: lease count, revision growth, db size, how long expired
// leases take to go, and what compaction and defragmentation give back.
import { SERVER_NEEDS } from "../backends/index.ts";
import { cpus, loadavg, totalmem } from "node:os";
import type { OptionSpec } from "../lib/index.ts";
import type { Experiment, Findings, Plot, Table } from "./experiment.ts";
import { count, size, Stopper } from "./keys-load.ts";
import { redisKeys, type Expiry, type RedisKeys } from "./keys-redis.ts";
import { etcdKeys, type EtcdKeys } from "./keys-etcd.ts";

/** etcd's default --quota-backend-bytes (2 GiB): past it a member raises NOSPACE and refuses writes. */
const ETCD_QUOTA = 2 * 1024 ** 3;

const OPTIONS: readonly OptionSpec[] = [
  { name: "keys", kind: "int", default: 10_000_000, min: 1, help: "locks to load into Redis" },
  // Longer than the 10 M load takes here (about 70-150 s, with the machine shared),
  // so all of them are held at once when it ends and the memory is that of 10 M
  // locks; short enough that all expire within a few minutes of watching.
  { name: "ttl", kind: "int", default: 180_000, min: 1000, help: "the locks' TTL in ms (etcd leases round it up to whole seconds)" },
  { name: "seed", kind: "int", default: 1, min: 0, help: "draws the locks' names and owners: the same seed, the same locks" },
  { name: "backends", kind: "list", default: ["redis", "etcd"], choices: ["redis", "etcd"], help: "where to load them" },
  { name: "expiry", kind: "list", default: ["active", "lazy"], choices: ["active", "lazy"], help: "Redis runs: active expiry as shipped, and lazy only (the active cycle off)" },
  // etcd took 480 locks/s here (150-550 as the shared machine was busier or not):
  // 100,000 outlasted the 180 s TTL, so leases expired before the load was done and
  // the lease count never showed them all; 50,000 load in about 100 s.
  { name: "etcd-keys", kind: "int", default: 50_000, min: 1, help: "locks to load into etcd (a lease and a put each, a few hundred a second here: 10 M would take hours)" },
  { name: "observe", kind: "number", default: 60, min: 0, help: "seconds to watch after the last lock's TTL has passed (etcd: longer if its leases are still being revoked)" },
  { name: "load-limit", kind: "number", default: 1200, min: 1, help: "seconds a load may take; one that would take longer stops there, and what it loaded is still watched" },
];

export const keys: Experiment = {
  name: "keys",
  title: "Ten million locks: memory, expiry and compaction",
  describe: "many short-lived locks from a seed: Redis memory per lock and keys expired but not reclaimed (active versus lazy expiry); etcd leases, revisions and compaction",
  options: OPTIONS,
  // The etcd load must end before its leases expire (a few hundred locks a second
  // here), or the lease count never shows them all.
  quick: { keys: 20_000, "etcd-keys": 200, ttl: 4000, observe: 1 },
  starts: () => [SERVER_NEEDS.redis, SERVER_NEEDS.etcd],
  async run(ctx): Promise<Findings> {
    const o = ctx.options;
    const backends = o.backends as string[];
    const machine = { cores: cpus().length, memory: totalmem(), load_average_at_start: loadavg().map((v) => Number(v.toFixed(2))) };
    const stop = new Stopper();
    const onSignal = (sig: NodeJS.Signals): void => {
      // A terminal's Ctrl-C reaches npm and tsx too; the first one counts.
      if (!stop.interrupted) ctx.log(`\n${sig}: stopping; the servers are torn down and what was measured so far is kept`);
      stop.interrupt(`interrupted (${sig})`);
    };
    const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
    for (const s of signals) process.on(s, onSignal);
    const common = { ttlMs: o.ttl as number, seed: o.seed as number, observeS: o.observe as number, loadLimitS: o["load-limit"] as number, dir: ctx.dir, stop, log: ctx.log };
    const redis: RedisKeys[] = [];
    let etcd: EtcdKeys | null = null;
    try {
      if (backends.includes("redis"))
        for (const expiry of o.expiry as Expiry[]) if (!stop.interrupted) redis.push(await redisKeys({ ...common, expiry, keys: o.keys as number }));
      if (backends.includes("etcd") && !stop.interrupted) etcd = await etcdKeys({ ...common, keys: o["etcd-keys"] as number });
    } finally {
      for (const s of signals) process.off(s, onSignal);
    }
    const load_average_at_end = loadavg().map((v) => Number(v.toFixed(2)));
    return {
      summary: [...redis.flatMap(redisSentences), ...(etcd ? etcdSentences(etcd) : []), machineSentence(machine, redis, etcd, stop.interrupted)],
      tables: [loadTable(redis, etcd), ...(redis.length ? [redisExpiryTable(redis)] : []), ...(etcd ? [etcdTable(etcd)] : [])],
      plots: [...(redis.length ? redisPlots(redis) : []), ...(etcd ? etcdPlots(etcd) : [])],
      data: { machine: { ...machine, load_average_at_end }, ttl_ms: o.ttl, seed: o.seed, interrupted: stop.interrupted, redis, etcd },
      runs: [],
    };
  },
};

const s1 = (v: number): string => `${v.toFixed(1)} s`;
const perLock = (bytes: number): string => `${count(bytes)} B`;

function redisSentences(r: RedisKeys): string[] {
  const e = r.expiry_figures;
  const arm = r.expiry === "active" ? "active expiry as shipped" : "lazy expiry only (the active cycle off)";
  const out = [
    `Redis ${r.version}, ${arm}: ${count(r.granted)} of ${count(r.requested)} locks granted in ${s1(r.load_s)} (${count(r.locks_per_s)}/s, redis-server busy ${r.server_cpu_share} of a core); used_memory ${size(r.used_memory_before)} before, ${size(r.used_memory_after_load)} after (${perLock(r.bytes_per_key)} per lock), peak ${size(r.used_memory_peak)}.${r.stopped ? ` The load stopped at ${count(r.granted)}: ${r.stopped}.` : ""}`,
  ];
  if (r.interrupted) return out;
  const gone = e.empty_after_last_ttl_s === null ? `${count(e.keys_at_end)} keys were still counted at the end of the watch (${r.observe_s} s later)` : `the keyspace was empty ${s1(e.empty_after_last_ttl_s)} after the last TTL`;
  const active = r.expiry === "active" && e.reclaimed_per_s_after_last_ttl !== null
    ? ` After the last TTL the active cycle reclaimed ${count(e.reclaimed_per_s_after_last_ttl)} keys a second, and ${count(e.time_cap_reached)} of its cycles stopped at their time limit with expired keys left.`
    : "";
  out.push(
    `Every TTL had passed by ${s1(e.last_ttl_s)} after the load began; the keyspace counted ${count(e.keys_at_last_ttl ?? 0)} keys then, and ${gone}. At most ${count(e.expired_unreclaimed_max)} keys were expired but not yet reclaimed at once${e.expired_unreclaimed_max_at_s !== null ? ` (${s1(e.expired_unreclaimed_max_at_s)})` : ""}; used_memory at the end of the watch ${size(e.used_memory_at_end)}.${active}`,
  );
  if (r.scan)
    out.push(`One SCAN pass afterwards, the active cycle off (${count(r.scan.calls)} call${r.scan.calls === 1 ? "" : "s"}, ${s1(r.scan.duration_s)}), reclaimed ${count(r.scan.reclaimed)} expired keys on access and left ${count(r.scan.keys_after)}, used_memory ${size(r.scan.used_memory_after)}.`);
  return out;
}

function etcdSentences(e: EtcdKeys): string[] {
  const x = e.expiry_figures;
  const out = [
    `etcd ${e.version}, three members: ${count(e.granted)} of ${count(e.requested)} locks (a lease and a put each, ${e.concurrency} at a time) in ${s1(e.load_s)} (${count(e.locks_per_s)}/s); revision ${count(e.revision_before)} to ${count(e.revision_after_load)} (a revision per put, and one per lease that expired during the load), ${count(e.leases_after_load)} leases and ${count(e.keys_after_load)} keys when it ended; etcd-1's db ${size(e.db_size_after_load)} (${size(e.db_size_in_use_after_load)} in use, ${perLock(e.db_bytes_per_lock)} per lock), the members' memory ${size(e.rss_before)} to ${size(e.rss_after_load)} (${size(e.rss_peak)} at most).${e.stopped ? ` The load stopped at ${count(e.granted)}: ${e.stopped}.` : ""}`,
  ];
  if (e.interrupted) return out;
  const gone = x.gone_after_last_ttl_s === null ? `${count(x.leases_at_end)} leases and ${count(x.keys_at_end)} keys were still there when the watch ended` : `the last lease and key were gone ${s1(x.gone_after_last_ttl_s)} later`;
  // A rate over less than a few seconds of samples says nothing.
  const rate = (x.gone_after_last_ttl_s ?? Infinity) >= 3 ? ` etcd revoked about ${count(x.revoked_per_s)} a second, and` : "";
  out.push(`Every lease's TTL had passed by ${s1(x.last_ttl_s)};${rate} ${gone}, the revision now ${count(x.revision_at_end)} (each revoked lease's delete is a revision too).`);
  const [before, compacted, defragged] = e.compaction;
  if (defragged) {
    const m0 = (step: typeof before) => step.members[0];
    out.push(
      `Compacting to revision ${count(m0(before).revision)} took etcd-1's db in use from ${size(m0(before).db_size_in_use)} to ${size(m0(compacted).db_size_in_use)} while the file stayed ${size(m0(compacted).db_size)}; defragmenting etcd-1 shrank its file to ${size(m0(defragged).db_size)}, and the members not defragmented kept ${defragged.members.slice(1).map((m) => size(m.db_size)).join(" and ")}.`,
    );
  }
  return out;
}

function machineSentence(machine: { cores: number; memory: number; load_average_at_start: number[] }, redis: RedisKeys[], etcd: EtcdKeys | null, interrupted: string | null): string {
  const parts = [`This machine: ${machine.cores} cores (shared with other work: load average ${machine.load_average_at_start[0]} at the start), ${size(machine.memory)}.`];
  for (const r of redis) {
    const fits = r.bytes_per_key ? ` at ${perLock(r.bytes_per_key)} a lock, 90% of its memory would hold about ${count(Math.round((0.9 * machine.memory) / r.bytes_per_key / 1e6))} M` : "";
    parts.push(r.stopped ? `Redis (${r.expiry}) stopped at ${count(r.granted)} locks: ${r.stopped}.` : `Redis (${r.expiry}) took all ${count(r.granted)} locks;${fits}.`);
  }
  if (etcd) {
    const rate = etcd.locks_per_s;
    const tenM = rate ? ` at ${count(rate)} locks/s, 10 M would take ${(10_000_000 / rate / 3600).toFixed(1)} h` : "";
    const db = etcd.db_bytes_per_lock ? ` and at ${perLock(etcd.db_bytes_per_lock)} of db per lock reach ${size(etcd.db_bytes_per_lock * 10_000_000)}, ${etcd.db_bytes_per_lock * 10_000_000 > ETCD_QUOTA ? "past" : "within"} etcd's default 2 GiB backend quota` : "";
    parts.push(`etcd ${etcd.stopped ? `stopped at ${count(etcd.granted)} locks: ${etcd.stopped}` : `was given ${count(etcd.requested)} locks (--etcd-keys)`}:${tenM}${db}.`);
  }
  if (interrupted) parts.push(`The experiment was ${interrupted}; the figures cover what ran before.`);
  return parts.join(" ");
}

function loadTable(redis: RedisKeys[], etcd: EtcdKeys | null): Table {
  const errors = (e: Record<string, number>): string => Object.entries(e).map(([k, v]) => `${k} ${count(v)}`).join(", ") || "0";
  return {
    title: "Loads",
    head: ["backend", "arm", "asked", "granted", "busy", "errors", "load (s)", "locks/s", "memory after load", "per lock", "peak", "stopped by"],
    rows: [
      ...redis.map((r) => ["redis", `${r.expiry} expiry`, r.requested, r.granted, r.busy, errors(r.errors), r.load_s, r.locks_per_s, `used_memory ${size(r.used_memory_after_load)}`, perLock(r.bytes_per_key), size(r.used_memory_peak), r.stopped ?? ""]),
      ...(etcd ? [["etcd", "3 members, a lease per lock", etcd.requested, etcd.granted, etcd.busy, errors(etcd.errors), etcd.load_s, etcd.locks_per_s,
        `db ${size(etcd.db_size_in_use_after_load)} in use, RSS ${size(etcd.rss_after_load)}`, `db ${perLock(etcd.db_bytes_per_lock)}, RSS ${perLock(etcd.rss_bytes_per_lock)}`, `RSS ${size(etcd.rss_peak)}`, etcd.stopped ?? ""]] : []),
    ],
    note: "Redis per lock: used_memory after the load less before, over the keys then counted. etcd per lock: etcd-1's db in use, and the three members' resident memory together, after the load less before, over the locks granted; that memory holds more than the locks: etcd 3.4 keeps its raft log in memory between snapshots (every 100,000 entries by default), and a lock is two entries. busy: a name drawn twice.",
  };
}

function redisExpiryTable(redis: RedisKeys[]): Table {
  return {
    title: "Redis expiry",
    head: ["expiry", "every TTL passed (s)", "keys then", "most expired yet counted", "reclaimed/s after last TTL", "empty after last TTL", "keys at end of watch", "used_memory then", "SCAN pass", "reclaimed by SCAN", "keys after", "used_memory after"],
    rows: redis.map((r) => {
      const e = r.expiry_figures;
      return [r.expiry, e.last_ttl_s, e.keys_at_last_ttl ?? "n/a", e.expired_unreclaimed_max, e.reclaimed_per_s_after_last_ttl ?? "n/a", e.empty_after_last_ttl_s === null ? "not while watched" : s1(e.empty_after_last_ttl_s), e.keys_at_end, size(e.used_memory_at_end),
        r.scan ? `${s1(r.scan.duration_s)}, ${count(r.scan.calls)} calls` : "not run", r.scan?.reclaimed ?? "n/a", r.scan?.keys_after ?? "n/a", r.scan ? size(r.scan.used_memory_after) : "n/a"];
    }),
    note: "Seconds count from the start of the load. Expired yet counted: the keyspace count less the locks that can still be live (those granted less those whose OK came back more than a TTL ago), a floor. The SCAN pass runs after the watch with the active cycle off, so what it reclaims is its own: SCAN checks every key it returns and reclaims it if expired.",
  };
}

function etcdTable(e: EtcdKeys): Table {
  const x = e.expiry_figures;
  return {
    title: "etcd: leases expiring, compaction and defragmentation",
    head: ["step", "member", "revision", "leases", "keys", "db size", "db in use"],
    rows: [
      ["after the load", "etcd-1", e.revision_after_load, e.leases_after_load, e.keys_after_load, size(e.db_size_after_load), size(e.db_size_in_use_after_load)],
      [`end of the watch (every TTL passed at ${s1(x.last_ttl_s)}, gone ${x.gone_after_last_ttl_s === null ? "not while watched" : `${s1(x.gone_after_last_ttl_s)} later`})`, "etcd-1", x.revision_at_end, x.leases_at_end, x.keys_at_end, "", ""],
      ...e.compaction.flatMap((c) => c.members.map((m) => [c.step, m.member, m.revision, "", "", size(m.db_size), size(m.db_size_in_use)])),
    ],
    note: "db size: the member's db file; db in use: the pages holding data. A compaction frees pages inside the file; only a defragmentation gives them back.",
  };
}

const series = <T extends { t: number }>(name: string, samples: T[], y: (s: T) => number) => ({ name, points: samples.map((s): [number, number] => [s.t, y(s)]) });

function redisPlots(redis: RedisKeys[]): Plot[] {
  return [
    {
      title: "Redis keyspace: keys counted, and locks that can still be live",
      x: "seconds since the load began",
      y: "keys",
      series: redis.flatMap((r) => [series(`${r.expiry}: keys`, r.samples, (s) => s.keys), series(`${r.expiry}: live at most`, r.samples, (s) => s.live_at_most)]),
    },
    {
      title: "Redis used_memory",
      x: "seconds since the load began",
      y: "MB",
      series: redis.map((r) => series(`${r.expiry} expiry`, r.samples, (s) => s.used_memory / 1e6)),
    },
  ];
}

function etcdPlots(e: EtcdKeys): Plot[] {
  return [
    {
      title: "etcd: revision, leases and lock keys",
      x: "seconds since the load began",
      y: "count",
      series: [series("revision", e.samples, (s) => s.revision), series("leases", e.samples, (s) => s.leases), series("keys", e.samples, (s) => s.keys)],
    },
    {
      title: "etcd: db size (etcd-1) and memory (three members)",
      x: "seconds since the load began",
      y: "MB",
      series: [series("db size", e.samples, (s) => s.db_size / 1e6), series("db in use", e.samples, (s) => s.db_size_in_use / 1e6), series("RSS, 3 members", e.samples, (s) => s.rss / 1e6)],
    },
  ];
}
