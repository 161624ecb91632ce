// fence-counters: what the fencing token itself costs when many keys are hot
// (issue 14, the lab's stretch goal). A fence must be issued on every grant, so
// its source sits on the lock's hot path. Three sources, as the backends issue
// them: Redis `INCR fence:{key}` on one server (a counter per lock key, kept
// forever: a counter that expired would start again at 1), Redlock's max-incr
// (the same INCR on all five nodes, the largest answer), and etcd's revision
// (any write's revision: one counter for the whole cluster, so every key's fences
// go through the same Raft log). Each cell drives one source with closed-loop
// clients over K hot keys drawn from a seed, and measures fences a second, the
// latency of one fence, the server's CPU and what the counters leave behind; and
// it checks what a fence must be: no two alike for a key, and each client's
// fences of a key increasing.
import { SERVER_NEEDS } from "../backends/index.ts";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Redis } from "ioredis";
import type { Etcd3 } from "etcd3";
import { rng, type OptionSpec } from "../lib/index.ts";
import { ProcessGroup } from "../cluster/processes.ts";
import { PortPlan } from "../cluster/ports.ts";
import { startRedisNodes } from "../backends/redis/server.ts";
import { startEtcdCluster } from "../backends/etcd/server.ts";
import { spawnProxyServer } from "../proxy/index.ts";
import { fenceKey, honestRedis } from "../backends/redis/client.ts";
import { etcdClient } from "../backends/etcd/connection.ts";
import type { Experiment, Findings, Plot, Table } from "./experiment.ts";
import { count, size, Stopper } from "./keys-load.ts";
import { cpuSeconds } from "./proc.ts";

type Source = "redis" | "redlock" | "etcd";

const OPTIONS: readonly OptionSpec[] = [
  { name: "backends", kind: "list", default: ["redis", "redlock", "etcd"], choices: ["redis", "redlock", "etcd"], help: "fence sources: redis (INCR on one server), redlock (INCR on five, the largest), etcd (a write's revision, three members)" },
  { name: "keys", kind: "list", default: ["1", "100", "10000", "100000"], help: "how many hot keys the fences are asked for, one cell each" },
  { name: "clients", kind: "int", default: 64, min: 1, max: 10_000, help: "fences in flight at once (closed loop: each client asks again when answered)" },
  { name: "connections", kind: "int", default: 8, min: 1, max: 256, help: "connections to each server the clients share" },
  { name: "duration", kind: "number", default: 10, min: 0.2, help: "seconds each cell is measured (after a tenth as long of warm-up)" },
  { name: "seed", kind: "int", default: 1, min: 0, help: "draws the keys each client asks for" },
  { name: "overlap", kind: "on-off", default: false, help: "on: fences for one key asked concurrently, as when the lock has already failed; off: one at a time per key, as a working lock's holders ask" },
];

/** One fence from a source: the token, or an error's message. */
type Issue = (key: string) => Promise<number>;

interface SourceUnderTest {
  source: Source;
  version: string;
  issue: Issue;
  /** Bytes the counters take on the servers (summed over nodes; etcd: db in use on one member). */
  stateBytes(): Promise<number>;
  /** CPU seconds the server processes have used so far. */
  serverCpu(): number;
  servers: number;
}

export interface Cell {
  source: Source;
  keys: number;
  clients: number;
  duration_s: number;
  fences: number;
  errors: Record<string, number>;
  fences_per_s: number;
  latency_ms: { p50: number; p99: number; p999: number; max: number };
  /** Two fences alike for one key (etcd: anywhere): a fence that cannot order its holders. */
  duplicates: number;
  /** A client's fence for a key not above its previous one for that key. */
  not_increasing: number;
  /** Server CPU over the cell, in % of one core (all of the source's servers together). */
  server_cpu_pct: number;
  /** This process's CPU over the cell, % of one core: near 100 means the harness, not the server, set the pace. */
  harness_cpu_pct: number;
  /** What the cell left on the servers, less what was there before it. */
  state_bytes: number;
  state_bytes_per_key: number | null;
  state_bytes_per_fence: number | null;
}

export const fenceCounters: Experiment = {
  name: "fence-counters",
  title: "Fence counters: Redis INCR against etcd revisions, many hot keys",
  describe: "the fencing token's own cost: Redis INCR fence:{key}, Redlock's INCR on five nodes, etcd revisions, over 1 to 100,000 hot keys (fences/s, latency, server CPU, state left)",
  options: OPTIONS,
  quick: { keys: ["1", "100"], duration: 1, clients: 16, connections: 2 },
  starts: () => [SERVER_NEEDS.redis, SERVER_NEEDS.etcd],
  async run(ctx): Promise<Findings> {
    const o = ctx.options;
    const keyCounts = (o.keys as string[]).map((k) => {
      const n = Number(k);
      if (!Number.isInteger(n) || n < 1) throw new Error(`--keys: ${JSON.stringify(k)} is not a whole number of keys`);
      return n;
    });
    const stop = new Stopper();
    const onSignal = (sig: NodeJS.Signals): void => {
      if (!stop.interrupted) ctx.log(`\n${sig}: stopping fence-counters; its servers are torn down and the cells measured so far are kept`);
      stop.interrupt(`interrupted (${sig})`);
    };
    const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
    for (const s of signals) process.on(s, onSignal);
    const cells: Cell[] = [];
    const versions: Record<string, string> = {};
    try {
      for (const source of o.backends as Source[]) {
        if (stop.interrupted) break;
        const dir = join(ctx.dir, source);
        mkdirSync(join(dir, "logs"), { recursive: true });
        const group = new ProcessGroup(dir);
        const closers: Array<() => void> = [];
        try {
          ctx.log(`fence-counters: starting ${source} ...`);
          const sut = await start(source, group, dir, o.connections as number, closers);
          versions[source] = sut.version;
          for (const keys of keyCounts) {
            if (stop.interrupted) break;
            const cell = await measure(sut, keys, o.clients as number, o.duration as number, o.seed as number, o.overlap as boolean, stop);
            cells.push(cell);
            ctx.log(`fence-counters: ${source}, ${count(keys)} keys: ${count(cell.fences_per_s)} fences/s, p50 ${cell.latency_ms.p50} ms, p99 ${cell.latency_ms.p99} ms, server ${cell.server_cpu_pct}% of a core, harness ${cell.harness_cpu_pct}%${cell.duplicates || cell.not_increasing ? `, ${cell.duplicates} duplicate and ${cell.not_increasing} out-of-order fences` : ""}`);
          }
        } finally {
          for (const c of closers) c();
          await group.stopAll();
          rmSync(join(dir, "data"), { recursive: true, force: true });
        }
      }
    } finally {
      for (const s of signals) process.off(s, onSignal);
    }
    return findings(cells, versions, o, stop.interrupted);
  },
};

async function start(source: Source, group: ProcessGroup, dir: string, connections: number, closers: Array<() => void>): Promise<SourceUnderTest> {
  const pidsOf = (names: string[]): number[] => names.map((n) => group.get(n)?.pid ?? 0);
  if (source === "etcd") {
    // Members reach each other through a proxy, as in every run; clients talk to them directly.
    const proxy = await spawnProxyServer({ logFile: join(dir, "logs", "proxy.log") });
    group.watch(proxy.pid);
    group.onStop(() => proxy.stop());
    const cluster = await startEtcdCluster({ group, ports: new PortPlan(0), runDir: dir, toxiproxyUrl: proxy.url });
    const clients: Etcd3[] = Array.from({ length: connections }, () => etcdClient(cluster.nodes, 10_000));
    const admin = etcdClient([cluster.nodes[0]], 10_000);
    for (const c of [...clients, admin]) closers.push(() => c.close());
    const pids = pidsOf(cluster.nodes.map((n) => n.name));
    let next = 0;
    return {
      source, servers: cluster.nodes.length,
      version: (await admin.maintenance.status()).version,
      // The revision of the write is the fence, as etcd-queue's create revision is.
      issue: async (key) => Number((await clients[next++ % clients.length].kv.put({ key: Buffer.from(`fence/${key}`), value: Buffer.from("1") })).header.revision),
      stateBytes: async () => Number(((await admin.maintenance.status()) as { dbSizeInUse?: string }).dbSizeInUse ?? 0),
      serverCpu: () => pids.reduce((s, p) => s + cpuSeconds(p), 0),
    };
  }
  const nodes = await startRedisNodes(group, new PortPlan(0), source === "redlock" ? 5 : 1, { runDir: dir });
  const pools: Redis[][] = [];
  for (const node of nodes) {
    const pool = Array.from({ length: connections }, () => honestRedis(node, 10_000));
    await Promise.all(pool.map((r) => r.connect()));
    for (const r of pool) closers.push(() => r.disconnect());
    pools.push(pool);
  }
  const pids = pidsOf(nodes.map((n) => n.name));
  const info = async (r: Redis, field: string): Promise<string> => new RegExp(`^${field}:(.*)$`, "m").exec(String(await r.call("INFO", field === "redis_version" ? "server" : "memory")))?.[1]?.trim() ?? "";
  let next = 0;
  return {
    source, servers: nodes.length,
    version: await info(pools[0][0], "redis_version"),
    // Redlock's max-incr: every node counts, the largest answer is the fence (a node
    // that restarted empty cannot take the fence backwards while others remember).
    issue: async (key) => {
      const c = next++ % connections;
      const answers = await Promise.all(pools.map((pool) => pool[c].incr(fenceKey(key))));
      return Math.max(...answers);
    },
    stateBytes: async () => (await Promise.all(pools.map(async (pool) => Number(await info(pool[0], "used_memory"))))).reduce((a, b) => a + b, 0),
    serverCpu: () => pids.reduce((s, p) => s + cpuSeconds(p), 0),
  };
}

async function measure(sut: SourceUnderTest, keys: number, clients: number, durationS: number, seed: number, overlap: boolean, stop: Stopper): Promise<Cell> {
  // Each cell its own key space, so its counters start from nothing and what it
  // leaves is its own.
  const names = Array.from({ length: keys }, (_, i) => `fc:${keys}:${i}`);
  const stateBefore = await sut.stateBytes();
  const latencies: number[] = [];
  const byKey = new Map<number, number[]>();
  const errors: Record<string, number> = {};
  let measuring = false;
  let running = true;
  let notIncreasing = 0;
  // A working lock lets one holder of a key at a time ask for its fence, so by
  // default a key is asked by one client at a time, and no more clients run than
  // there are keys. --overlap asks as a failed lock's holders would.
  const busy = new Set<number>();
  const loop = async (client: number): Promise<void> => {
    const r = rng(seed, "fence-counters", keys, client);
    const last = new Map<number, number>();
    while (running) {
      let k = Math.floor(r.next() * keys);
      while (!overlap && busy.has(k)) k = Math.floor(r.next() * keys);
      busy.add(k);
      const t = performance.now();
      try {
        const fence = await sut.issue(names[k]);
        if (!measuring) continue;
        latencies.push(performance.now() - t);
        let seen = byKey.get(k);
        if (!seen) byKey.set(k, (seen = []));
        seen.push(fence);
        const prev = last.get(k);
        if (prev !== undefined && fence <= prev) notIncreasing++;
        last.set(k, fence);
      } catch (e) {
        const why = (e as Error).message.slice(0, 80);
        if (measuring) errors[why] = (errors[why] ?? 0) + 1;
      } finally {
        busy.delete(k);
      }
    }
  };
  const inFlight = overlap ? clients : Math.min(clients, keys);
  const loops = Array.from({ length: inFlight }, (_, i) => loop(i));
  await stop.wait(durationS * 100);
  measuring = true;
  const cpu0 = sut.serverCpu();
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  await stop.wait(durationS * 1000);
  measuring = false;
  const elapsed = (performance.now() - t0) / 1000;
  const cpu1 = sut.serverCpu();
  const own = process.cpuUsage(own0);
  running = false;
  await Promise.all(loops);

  const all = sut.source === "etcd" ? [[...byKey.values()].flat()] : [...byKey.values()];
  let duplicates = 0;
  for (const fences of all) {
    fences.sort((a, b) => a - b);
    for (let i = 1; i < fences.length; i++) if (fences[i] === fences[i - 1]) duplicates++;
  }
  const stateBytes = Math.max(0, (await sut.stateBytes()) - stateBefore);
  const sorted = Float64Array.from(latencies).sort();
  const at = (q: number): number => (sorted.length ? round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))], 3) : NaN);
  const fences = latencies.length;
  return {
    source: sut.source, keys, clients: inFlight, duration_s: round(elapsed, 3), fences, errors,
    fences_per_s: Math.round(fences / elapsed),
    latency_ms: { p50: at(0.5), p99: at(0.99), p999: at(0.999), max: sorted.length ? round(sorted[sorted.length - 1], 3) : NaN },
    duplicates, not_increasing: notIncreasing,
    server_cpu_pct: Math.round(((cpu1 - cpu0) / elapsed) * 100),
    harness_cpu_pct: Math.round(((own.user + own.system) / 1e6 / elapsed) * 100),
    state_bytes: stateBytes,
    // used_memory moves by kilobytes with the clients' buffers: per key only where there are enough keys to see through that.
    state_bytes_per_key: byKey.size >= MIN_KEYS_FOR_STATE ? Math.round(stateBytes / byKey.size) : null,
    state_bytes_per_fence: fences ? round(stateBytes / fences, 1) : null,
  };
}

const round = (v: number, digits: number): number => Number(v.toFixed(digits));

const MIN_KEYS_FOR_STATE = 1000;

const LABEL: Record<Source, string> = { redis: "Redis INCR (1 server)", redlock: "Redlock max-incr (5 servers)", etcd: "etcd revision (3 members)" };

function findings(cells: Cell[], versions: Record<string, string>, o: Record<string, unknown>, interrupted: string | null): Findings {
  const bySource = (s: Source): Cell[] => cells.filter((c) => c.source === s);
  const sources = [...new Set(cells.map((c) => c.source))];
  const summary: string[] = [];
  for (const s of sources) {
    const cs = bySource(s);
    const best = cs.reduce((a, b) => (b.fences_per_s > a.fences_per_s ? b : a));
    const spread = cs.map((c) => `${count(c.fences_per_s)}/s at ${count(c.keys)} key${c.keys === 1 ? "" : "s"}`).join(", ");
    const harness = cs.some((c) => c.harness_cpu_pct >= 90) ? " The harness's one process used a whole core in some cells, so there the figure is what one Node process can ask, a floor for the server." : "";
    const state = s === "etcd"
      ? ` Each fence is a revision of the whole cluster kept until compaction: ${cs.map((c) => `${c.state_bytes_per_fence ?? "n/a"} B of db per fence at ${count(c.keys)} keys`).join(", ")}.`
      : cs.some((c) => c.state_bytes_per_key !== null)
        ? ` The counters stay after their locks: ${cs.filter((c) => c.state_bytes_per_key !== null).map((c) => `${c.state_bytes_per_key} B of used_memory per key at ${count(c.keys)} keys`).join(", ")}${s === "redlock" ? ", over the five nodes" : ""}.`
        : "";
    summary.push(`${LABEL[s]}, ${s === "etcd" ? "etcd" : "Redis"} ${versions[s] ?? "?"}: ${spread}; at best ${count(best.fences_per_s)} fences/s with p50 ${best.latency_ms.p50} ms and p99 ${best.latency_ms.p99} ms (${best.clients} in flight), the server${s === "redis" ? "" : "s"} at ${best.server_cpu_pct}% of a core.${state}${harness}`);
  }
  const bad = cells.filter((c) => c.duplicates || c.not_increasing);
  summary.push(bad.length
    ? `Fences that could not order their holders: ${bad.map((c) => `${LABEL[c.source]} at ${count(c.keys)} keys, ${c.duplicates} alike and ${c.not_increasing} not increasing`).join("; ")}.${bad.some((c) => c.source === "redlock") && o.overlap ? " Redlock's max-incr is unique only while the lock lets one holder of a key ask at a time: asked at once, two clients' INCRs reach the five nodes in different orders, and each can take the same largest answer (the duplicate-fence anomaly of scenario F1)." : ""}`
    : `Every fence checked: no two alike for a key (etcd: in the whole cluster), and each client's fences of a key increasing, in all ${count(cells.reduce((s, c) => s + c.fences, 0))} fences.`);
  if (interrupted) summary.push(`The experiment was ${interrupted}; the cells measured before are shown.`);

  const table: Table = {
    title: "Fences per second and latency, by source and hot keys",
    head: ["source", "hot keys", "in flight", "fences/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "errors", "server CPU (% core)", "harness CPU (% core)", "state left", "per key", "per fence", "duplicates", "not increasing"],
    rows: cells.map((c) => [LABEL[c.source], c.keys, c.clients, c.fences_per_s, c.latency_ms.p50, c.latency_ms.p99, c.latency_ms.p999, c.latency_ms.max,
      Object.values(c.errors).reduce((a, b) => a + b, 0), c.server_cpu_pct, c.harness_cpu_pct, size(c.state_bytes), c.state_bytes_per_key === null ? "n/a" : `${c.state_bytes_per_key} B`, c.state_bytes_per_fence === null ? "n/a" : `${c.state_bytes_per_fence} B`, c.duplicates, c.not_increasing]),
    note: `Closed loop: ${o.overlap ? `${o.clients} clients, several at once on one key (--overlap on),` : `up to ${o.clients} clients, one at a time on a key as a working lock allows (so no more than there are keys),`} over ${o.connections} connections per server each ask again as soon as answered, for ${o.duration} s a cell after a tenth as long of warm-up, keys drawn uniformly. Clients talk to the servers directly (no fault proxy). State left: Redis used_memory (summed over the nodes) after the cell less before, per key asked; etcd: one member's db in use after less before, per fence. Server CPU over all of the source's servers; harness CPU is this one Node process.`,
  };
  const line = (y: (c: Cell) => number): Plot["series"] => sources.map((s) => ({ name: LABEL[s], points: bySource(s).map((c): [number, number] => [c.keys, y(c)]) }));
  const plots: Plot[] = [
    { title: "Fences per second against hot keys", x: "hot keys", y: "fences/s", logX: true, series: line((c) => c.fences_per_s) },
    { title: "Fence latency p99 against hot keys", x: "hot keys", y: "ms", logX: true, series: line((c) => c.latency_ms.p99) },
  ];
  return { summary, tables: [table], plots, data: { versions, clients: o.clients, overlap: o.overlap, connections: o.connections, duration_s: o.duration, seed: o.seed, interrupted, cells }, runs: [] };
}
