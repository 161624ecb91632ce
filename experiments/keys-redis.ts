// The keys experiment on one redis-server: N locks taken with the lock's own
// command, SET name owner PX ttl NX, pipelined; its memory and keyspace sampled
// once a second while they load, while their TTLs run out and for --observe
// seconds after the last one has; then one SCAN pass over whatever is left.
//
// Redis reclaims an expired key in two ways: lazily, when a command touches it,
// and actively, by a cycle that samples keys with a TTL ten times a second and
// carries on while enough of its sample had expired. The "active" arm runs Redis
// as shipped; the "lazy" arm turns the cycle off (DEBUG SET-ACTIVE-EXPIRE 0), so
// only access reclaims: what the keyspace and memory hold when nothing does.
// Both arms turn the cycle off for the SCAN pass, so that what the pass reclaims
// is its own (INFO counts expired keys reclaimed either way in one figure).
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { mkdirSync, rmSync } from "node:fs";
import type { Redis } from "ioredis";
import { ProcessGroup } from "../cluster/processes.ts";
import { PortPlan } from "../cluster/ports.ts";
import { startRedisNodes } from "../backends/redis/server.ts";
import { honestRedis } from "../backends/redis/client.ts";
import { count, loadLimitReached, lockDraws, machineMemory, progress, size, sampleEverySecond, since, type LoadOptions } from "./keys-load.ts";

export type Expiry = "active" | "lazy";

export interface RedisKeysOptions extends LoadOptions {
  expiry: Expiry;
}

export interface RedisSample {
  /** Seconds since the load began. */
  t: number;
  phase: "before" | "load" | "wait" | "observe" | "scan" | "after";
  used_memory: number;
  used_memory_rss: number;
  keys: number;
  expires: number;
  /** Keys reclaimed after expiring so far, actively or on access (INFO stats). */
  expired_keys: number;
  expired_stale_perc: number;
  /** Active expiry cycles that stopped at their time limit (a quarter of the CPU) with expired keys still left. */
  expired_time_cap_reached_count: number;
  evicted_keys: number;
  /** redis-server's CPU seconds so far (user + sys). */
  cpu_s: number;
  /** Locks granted so far (OK replies read). */
  granted: number;
  /**
   * At most this many of the keys can still be live: the granted ones less those
   * whose OK came back more than a TTL ago (each was set before its reply, so it
   * has certainly expired). keys - live_at_most is a floor on keys expired but not
   * yet reclaimed.
   */
  live_at_most: number;
  machine_available: number | null;
}

export interface RedisKeys {
  expiry: Expiry;
  version: string;
  requested: number;
  granted: number;
  /** Refused as busy: a name drawn twice. */
  busy: number;
  errors: Record<string, number>;
  /** Sent with no reply read: the connection broke or the load was cut off. */
  unanswered: number;
  /** Why the load stopped short of --keys, or null. */
  stopped: string | null;
  load_s: number;
  locks_per_s: number;
  used_memory_before: number;
  used_memory_after_load: number;
  /** INFO's own used_memory_peak: the highest it ever was, between samples too. */
  used_memory_peak: number;
  keys_after_load: number;
  /** (used_memory after the load - before) / keys then. */
  bytes_per_key: number;
  /** redis-server's CPU over the load, as a share of the load's wall time (1 = one core all the time). */
  server_cpu_share: number;
  /** Seconds watched after the last TTL. */
  observe_s: number;
  expiry_figures: {
    /** Seconds (since the load began) by which every granted lock's TTL had passed. */
    last_ttl_s: number;
    keys_at_last_ttl: number | null;
    /** The largest floor on keys expired but still counted (keys - live_at_most), and when. */
    expired_unreclaimed_max: number;
    expired_unreclaimed_max_at_s: number | null;
    /** Seconds after the last TTL until the keyspace held nothing, or null if it never did while watched. */
    empty_after_last_ttl_s: number | null;
    keys_at_end: number;
    used_memory_at_end: number;
    reclaimed_while_watching: number;
    /** Keys reclaimed per second from the last TTL to the end of the watch (by the active cycle: nothing else touched them). */
    reclaimed_per_s_after_last_ttl: number | null;
    /** Active expiry cycles cut off by their time limit, from the start of the load to the end of the watch. */
    time_cap_reached: number;
  };
  scan: { duration_s: number; calls: number; keys_returned: number; reclaimed: number; keys_after: number; used_memory_after: number } | null;
  interrupted: string | null;
  samples: RedisSample[];
}

const BATCH = 5000;
// Two batches in flight: the server works on one while the next is built and sent,
// and an INFO from the sampler waits behind at most two batches (milliseconds).
const WINDOW = 2 * BATCH;

type Info = Record<string, string>;

function parseInfo(text: string): Info {
  const out: Info = {};
  for (const line of text.split("\r\n")) {
    const i = line.indexOf(":");
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

const num = (info: Info, field: string): number => Number(info[field] ?? 0);

/** db0's "keys=..,expires=..". */
function keyspace(info: Info): { keys: number; expires: number } {
  const db = info.db0 ?? "";
  return { keys: Number(/keys=(\d+)/.exec(db)?.[1] ?? 0), expires: Number(/expires=(\d+)/.exec(db)?.[1] ?? 0) };
}

/**
 * A raw RESP connection for the load alone. ioredis makes an object and a promise
 * per command: loading through it measured 63,000 locks/s here against 145,000
 * over a raw socket, so the figure would have been ioredis's, not Redis's. The
 * replies of SET .. NX are one line each: +OK, $-1 (busy) or -ERROR.
 */
class RespLoader {
  granted = 0;
  busy = 0;
  replies = 0;
  sent = 0;
  readonly errors: Record<string, number> = {};
  /** [ms since t0, granted] at each read: when the grants certainly happened by. */
  readonly acks: Array<[number, number]> = [];
  broken: string | null = null;
  private tail = "";
  private wake: () => void = () => {};

  private constructor(private readonly socket: Socket, private readonly t0: number) {
    socket.on("data", (d: Buffer) => this.read(d));
    const fail = (why: string): void => {
      this.broken ??= why;
      this.wake();
    };
    socket.on("error", (e) => fail(`connection failed: ${e.message}`));
    socket.on("close", () => fail("connection closed"));
  }

  static open(host: string, port: number, t0: number): Promise<RespLoader> {
    return new Promise((resolve, reject) => {
      const s = connect({ host, port });
      s.once("connect", () => resolve(new RespLoader(s, t0)));
      s.once("error", reject);
    });
  }

  private read(d: Buffer): void {
    const text = this.tail + d.toString("latin1");
    let i = 0;
    for (let j = text.indexOf("\r\n"); j >= 0; j = text.indexOf("\r\n", i)) {
      const c = text[i];
      if (c === "+") this.granted++;
      else if (c === "$" || c === "_") this.busy++;
      else {
        const code = /^-(\S+)/.exec(text.slice(i, j))?.[1] ?? "unreadable-reply";
        this.errors[code] = (this.errors[code] ?? 0) + 1;
      }
      this.replies++;
      i = j + 2;
    }
    this.tail = text.slice(i);
    this.acks.push([performance.now() - this.t0, this.granted]);
    this.wake();
  }

  /** Resolves once at most `outstanding` commands await a reply (or the connection broke). */
  async until(outstanding: number): Promise<void> {
    while (!this.broken && this.sent - this.replies > outstanding) await new Promise<void>((r) => (this.wake = r));
  }

  send(commands: string, n: number): void {
    this.sent += n;
    this.socket.write(commands);
  }

  close(): void {
    this.socket.destroy();
  }

  /** Granted locks whose reply came at or before `ms` (since t0). */
  grantedBy(ms: number): number {
    let lo = 0, hi = this.acks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.acks[mid][0] <= ms) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? 0 : this.acks[lo - 1][1];
  }
}

const bulk = (s: string): string => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;

export async function redisKeys(o: RedisKeysOptions): Promise<RedisKeys> {
  const dir = join(o.dir, `redis-${o.expiry}`);
  mkdirSync(join(dir, "logs"), { recursive: true });
  const group = new ProcessGroup(dir);
  let admin: Redis | null = null;
  let loader: RespLoader | null = null;
  let sampler: ReturnType<typeof sampleEverySecond> | null = null;
  try {
    const [node] = await startRedisNodes(group, new PortPlan(0), 1, {
      runDir: dir,
      // DEBUG SET-ACTIVE-EXPIRE, from this machine only; it changes nothing until used.
      extraConfig: ["enable-debug-command local"],
    });
    admin = honestRedis(node, 30_000);
    await admin.connect();
    const version = parseInfo(await admin.info("server")).redis_version ?? "unknown";
    if (o.expiry === "lazy") await admin.call("DEBUG", "SET-ACTIVE-EXPIRE", "0");

    const t0 = performance.now();
    const samples: RedisSample[] = [];
    let phase: RedisSample["phase"] = "before";
    const a = admin;
    const take = async (): Promise<RedisSample> => {
      const info = parseInfo(String(await a.call("INFO", "memory", "keyspace", "stats", "cpu")));
      const granted = loader?.granted ?? 0;
      const t = since(t0);
      return {
        t, phase,
        used_memory: num(info, "used_memory"), used_memory_rss: num(info, "used_memory_rss"), ...keyspace(info),
        expired_keys: num(info, "expired_keys"), expired_stale_perc: num(info, "expired_stale_perc"),
        expired_time_cap_reached_count: num(info, "expired_time_cap_reached_count"), evicted_keys: num(info, "evicted_keys"),
        cpu_s: num(info, "used_cpu_user") + num(info, "used_cpu_sys"),
        granted,
        // A millisecond more than the TTL: Redis expires a key once its time is strictly past.
        live_at_most: granted - (loader?.grantedBy(t * 1000 - o.ttlMs - 1) ?? 0),
        machine_available: machineMemory()?.available ?? null,
      };
    };
    samples.push(await take());
    const before = samples[0];
    sampler = sampleEverySecond(take, samples);

    // The load.
    phase = "load";
    loader = await RespLoader.open(node.host, node.port, t0);
    const draw = lockDraws(o.seed);
    const px = String(o.ttlMs);
    const label = `keys: redis (${o.expiry} expiry)`;
    const shown = progress(o.log, label, o.keys, () => `used_memory ${size(samples[samples.length - 1].used_memory)}`);
    let stopped: string | null = null;
    while (loader.sent < o.keys && !loader.broken) {
      stopped = loadLimitReached(o.stop, t0, o.loadLimitS);
      if (stopped) break;
      const n = Math.min(BATCH, o.keys - loader.sent);
      let commands = "";
      for (let i = 0; i < n; i++) {
        const { name, owner } = draw();
        commands += `*6\r\n$3\r\nSET\r\n${bulk(name)}${bulk(owner)}$2\r\nPX\r\n${bulk(px)}$2\r\nNX\r\n`;
      }
      loader.send(commands, n);
      await loader.until(WINDOW - BATCH);
      shown.update(loader.granted);
    }
    await loader.until(0);
    stopped ??= loader.broken;
    const loadEnd = performance.now();
    shown.end(loader.granted);
    await sampler.now();
    const afterLoad = samples[samples.length - 1];
    const loadS = (loadEnd - t0) / 1000;

    // Until the last TTL has passed, then --observe seconds more.
    const lastAck = loader.acks.length ? loader.acks[loader.acks.length - 1][0] : 0;
    const lastTtlS = (lastAck + o.ttlMs) / 1000;
    phase = "wait";
    if (!o.stop.interrupted) o.log(`${label}: every TTL has passed ${Math.max(0, lastTtlS - since(t0)).toFixed(0)} s from now; then watching ${o.observeS} s`);
    await o.stop.wait(lastTtlS * 1000 - (performance.now() - t0));
    await sampler.now();
    const atLastTtl = o.stop.interrupted ? null : samples[samples.length - 1];
    phase = "observe";
    await o.stop.wait(o.observeS * 1000);
    // Off before the last sample of the watch, so every key reclaimed after it is the SCAN pass's.
    await a.call("DEBUG", "SET-ACTIVE-EXPIRE", "0");
    await sampler.now();
    const atEnd = samples[samples.length - 1];

    // One pass of SCAN: every key it returns it first checks, and reclaims if expired.
    let scan: RedisKeys["scan"] = null;
    if (!o.stop.interrupted) {
      phase = "scan";
      const s0 = performance.now();
      let cursor = "0";
      let calls = 0;
      let returned = 0;
      do {
        const [next, keys] = (await a.scan(cursor, "COUNT", 1000)) as [string, string[]];
        cursor = next;
        calls++;
        returned += keys.length;
      } while (cursor !== "0" && !o.stop.interrupted);
      const duration = (performance.now() - s0) / 1000;
      phase = "after";
      await sampler.now();
      const after = samples[samples.length - 1];
      scan = { duration_s: duration, calls, keys_returned: returned, reclaimed: after.expired_keys - atEnd.expired_keys, keys_after: after.keys, used_memory_after: after.used_memory };
      o.log(`${label}: SCAN pass ${duration.toFixed(1)} s, ${count(scan.reclaimed)} expired keys reclaimed on access, ${count(after.keys)} left`);
    }
    await sampler.stop();
    sampler = null;

    const watched = samples.filter((s) => s.t >= lastTtlS && (s.phase === "wait" || s.phase === "observe"));
    const lingering = samples.map((s) => ({ t: s.t, n: Math.max(0, s.keys - s.live_at_most) }));
    const worst = lingering.reduce((m, x) => (x.n > m.n ? x : m), { t: NaN, n: 0 });
    const empty = watched.find((s) => s.keys === 0);
    const peak = num(parseInfo(await a.info("memory")), "used_memory_peak");
    const cpuShare = loadS > 0 ? (afterLoad.cpu_s - before.cpu_s) / loadS : 0;
    return {
      expiry: o.expiry,
      version,
      requested: o.keys,
      granted: loader.granted,
      busy: loader.busy,
      errors: loader.errors,
      unanswered: loader.sent - loader.replies,
      stopped,
      load_s: round(loadS, 2),
      locks_per_s: loadS > 0 ? Math.round(loader.granted / loadS) : 0,
      used_memory_before: before.used_memory,
      used_memory_after_load: afterLoad.used_memory,
      used_memory_peak: peak,
      keys_after_load: afterLoad.keys,
      bytes_per_key: afterLoad.keys ? Math.round((afterLoad.used_memory - before.used_memory) / afterLoad.keys) : 0,
      server_cpu_share: round(cpuShare, 2),
      observe_s: o.observeS,
      expiry_figures: {
        last_ttl_s: round(lastTtlS, 2),
        keys_at_last_ttl: atLastTtl?.keys ?? null,
        expired_unreclaimed_max: worst.n,
        expired_unreclaimed_max_at_s: worst.n ? worst.t : null,
        empty_after_last_ttl_s: empty ? round(empty.t - lastTtlS, 2) : null,
        keys_at_end: atEnd.keys,
        used_memory_at_end: atEnd.used_memory,
        reclaimed_while_watching: atEnd.expired_keys - before.expired_keys,
        reclaimed_per_s_after_last_ttl: atLastTtl && atEnd.t > atLastTtl.t ? Math.round((atEnd.expired_keys - atLastTtl.expired_keys) / (atEnd.t - atLastTtl.t)) : null,
        time_cap_reached: atEnd.expired_time_cap_reached_count - before.expired_time_cap_reached_count,
      },
      scan,
      interrupted: o.stop.interrupted,
      samples,
    };
  } finally {
    await sampler?.stop();
    loader?.close();
    admin?.disconnect();
    await group.stopAll();
    // save "" and no AOF: nothing in it but redis.conf; the log stays.
    rmSync(join(dir, "data"), { recursive: true, force: true });
  }
}

const round = (v: number, digits: number): number => Number(v.toFixed(digits));
