// ttl-liveness: what a lease costs when its holder dies. A holder (a real lock
// client in a process of its own, experiments/holder.ts) gets the lock and is
// SIGKILLed a moment later; a waiter in this process, already retrying, records
// when it is granted. Blocked time = that grant - the kill: what was left of the
// lease, plus how soon the waiter notices it ended (its retry delay; for etcd the
// leader's sweep of expired leases). Each client's servers are started once, for
// all its TTLs and kills. Then, per client, one short test:jepsen run at the
// shortest TTL with pauses aimed at holders and fencing on: a short TTL hands a
// paused holder's lock on sooner, and fencing is what keeps that hand-over safe.
import { mkdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import type { Endpoint, Hold, LockClient } from "../clients/index.ts";
import { BACKENDS, CLIENTS, SERVER_NEEDS, backendNamed, createClient } from "../backends/index.ts";
import { ProcessGroup } from "../cluster/processes.ts";
import { PortPlan } from "../cluster/ports.ts";
import { localDeployment } from "../cluster/deployment.ts";
import { EtcdAdmin } from "../backends/etcd/admin.ts";
import { spawnProxyServer } from "../proxy/index.ts";
import { BadInput, rng, sleep, entryArgs, type OptionSpec } from "../lib/index.ts";
import { Interrupted, type Experiment, type ExperimentContext, type Findings } from "./experiment.ts";
import { backendOf, jepsen } from "./runs.ts";
import type { HolderMessage } from "./holder.ts";


const OPTIONS: readonly OptionSpec[] = [
  // One client per backend. On the five-node backend the project's redlock (the
  // Redis documentation's algorithm) rather than node-redlock: both retry every
  // 100-300 ms, so they block alike, and redlock checks the validity it computes,
  // so its fenced run speaks of fencing alone, not of node-redlock's K5.
  { name: "clients", kind: "list", default: ["redis", "redlock", "etcd-queue"], choices: Object.keys(CLIENTS), help: "lock clients, each on its own backend's servers" },
  { name: "ttls", kind: "list", default: ["500", "2000", "10000"], help: "lease TTLs in ms" },
  { name: "repeats", kind: "int", default: 5, min: 1, help: "kills per client and TTL" },
  { name: "kill-after", kind: "int", default: 100, min: 0, help: "ms between the holder's grant and its SIGKILL" },
  { name: "fenced-time-limit", kind: "number", default: 10, min: 1, help: "seconds of operations of each fenced test:jepsen run" },
  { name: "seed", kind: "int", default: 1, min: 0, help: "seed of the fenced runs" },
];

/** One kill: times in ms from the SIGKILL; null where the kill measured nothing (see error). */
interface Trial {
  client: string;
  backend: string;
  ttl_ms: number;
  repeat: number;
  key: string;
  /** The lease the holder really had: the client's (etcd: whole seconds), or what the etcd member granted. */
  lease_ms: number | null;
  /** etcd: the TTL the member reports it granted the holder's lease, in seconds. */
  lease_granted_s?: number;
  /** The holder's last grant or renewal, answered this long before the kill (the lease began no later). */
  lease_from_ms: number | null;
  blocked_ms: number | null;
  /** The lease's latest possible end (lease_from + lease) to the waiter's grant: how soon it noticed, at least. */
  after_lease_end_ms: number | null;
  renewals: number;
  holder_fence: number | null;
  waiter_fence: number | null;
  error?: string;
}

interface FencedRun {
  client: string;
  backend: string;
  ttl_ms: number;
  pause_ms: [number, number];
  exit_code: number;
  valid: boolean | "unknown";
  holds: number;
  stale_writes_refused: number;
  anomaly_types: string[];
  run: string;
}

const now = (): number => performance.timeOrigin + performance.now();
const r1 = (x: number): number => Math.round(x * 10) / 10;

/** `p`, unless the experiment is interrupted first. */
function until<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const stop = (): void => reject(signal.reason);
    signal.addEventListener("abort", stop, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
}

const SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/**
 * Ctrl-C aborts the signal; whatever is running then tears down what it started.
 * The servers and holders are in process groups of their own, so only we see the
 * signal, and Node would otherwise exit at once and leave them to the reaper.
 */
function interruptible(log: (line: string) => void): { signal: AbortSignal; release(): void } {
  const ac = new AbortController();
  const on = (sig: NodeJS.Signals): void => {
    // A terminal sends Ctrl-C to the whole foreground group (npm, tsx, us): the first counts.
    if (ac.signal.aborted) return;
    log(`\n${sig}: stopping ttl-liveness and tearing down its servers and holders`);
    ac.abort(new Interrupted(sig));
  };
  for (const s of SIGNALS) process.on(s, on);
  return { signal: ac.signal, release: () => SIGNALS.forEach((s) => process.off(s, on)) };
}

/** The backend's servers on loopback ports of our own, with a fault proxy for members that talk to each other (etcd). */
async function startServers(group: ProcessGroup, backendName: string, dir: string): Promise<Endpoint[]> {
  const proxy = await spawnProxyServer({ logFile: join(dir, "logs", "proxy.log") });
  group.watch(proxy.pid);
  group.onStop(() => proxy.stop());
  const cluster = await backendNamed(backendName)!.start({
    group,
    deployment: localDeployment(group),
    ports: new PortPlan(0),
    runDir: dir,
    toxiproxyUrl: async () => proxy.url,
    serverOptions: { skewableClocks: false, deploy: "local", external: null, pauseMode: "signal", memberPartitions: "proxy" },
    options: {},
  });
  return cluster.nodes.map(({ name, host, port }) => ({ name, host, port }));
}

interface Bench {
  group: ProcessGroup;
  dir: string;
  client: string;
  backend: string;
  endpoints: Endpoint[];
  waiter: LockClient;
  admin: EtcdAdmin | null;
  killAfterMs: number;
  signal: AbortSignal;
}

/** Start a holder on `key`; resolves with its first word (held or failed), counting its renewals from then on. */
async function startHolder(b: Bench, key: string, ttl: number): Promise<{ name: string; first: HolderMessage; renewals: Array<{ ok: boolean; at: number }> }> {
  const name = `holder-${key}`;
  const proc = await b.group.spawn({
    name,
    command: process.execPath,
    args: [...entryArgs("experiments/holder"), b.client, JSON.stringify(b.endpoints), key, String(ttl), b.dir],
    logFile: join(b.dir, "logs", `${name}.log`),
    ipc: true,
  });
  const renewals: Array<{ ok: boolean; at: number }> = [];
  const first = new Promise<HolderMessage>((resolve, reject) => {
    proc.child.on("message", (m: HolderMessage) => (m.type === "renewed" ? renewals.push(m) : resolve(m)));
    void proc.exited.then((why) => reject(new Error(`the holder exited (${why}) before it said whether it held`)));
    setTimeout(() => reject(new Error("the holder said nothing within 30 s")), 30_000).unref();
  });
  return { name, first: await until(first, b.signal), renewals };
}

/** One kill: the holder holds, the waiter starts trying, the holder is SIGKILLed, the waiter gets in. */
async function killOnce(b: Bench, ttl: number, repeat: number): Promise<Trial> {
  const key = `ttl-${ttl}-${repeat}`;
  const base = { client: b.client, backend: b.backend, ttl_ms: ttl, repeat, key };
  const none = { lease_ms: null, lease_from_ms: null, blocked_ms: null, after_lease_end_ms: null, renewals: 0, holder_fence: null, waiter_fence: null };
  let holderName: string | null = null;
  try {
    const holder = await startHolder(b, key, ttl);
    holderName = holder.name;
    if (holder.first.type !== "held") return { ...base, ...none, error: `the holder did not get the lock: ${JSON.stringify(holder.first)}` };
    const { hold, at: heldAt } = holder.first;
    // Trying before the kill, as a real successor would be: its first attempts are refused.
    const waited = b.waiter.acquire(key, ttl, hold.ttlMs * 2 + 10_000).then(
      (r) => ({ r, at: now() }),
      (err: unknown) => ({ r: { type: "threw" as const, error: String(err) }, at: now() }),
    );
    const granted = b.admin && typeof hold.extra?.lease === "string" ? b.admin.leaseTtl(hold.extra.lease).catch(() => null) : Promise.resolve(null);
    await until(sleep(b.killAfterMs), b.signal);
    const killedAt = now();
    await b.group.kill(holder.name);
    const { r, at } = await until(waited, b.signal);
    const server = await granted;
    const leaseMs = server ? server.granted_s * 1000 : hold.ttlMs;
    const renewed = holder.renewals.filter((x) => x.ok && x.at < killedAt);
    const leaseFrom = Math.max(heldAt, ...renewed.map((x) => x.at));
    const measured = {
      lease_ms: leaseMs,
      ...(server ? { lease_granted_s: server.granted_s } : {}),
      lease_from_ms: r1(killedAt - leaseFrom),
      renewals: renewed.length,
      holder_fence: hold.fence,
    };
    if (r.type !== "ok") return { ...base, ...none, ...measured, error: `the waiter was not granted the lock: ${JSON.stringify(r)}` };
    await b.waiter.release(key, r.value).catch(() => {});
    return { ...base, ...measured, blocked_ms: r1(at - killedAt), after_lease_end_ms: r1(at - (leaseFrom + leaseMs)), waiter_fence: r.value.fence };
  } catch (err) {
    if (b.signal.aborted) throw err;
    return { ...base, ...none, error: String((err as Error)?.message ?? err) };
  } finally {
    if (holderName) await b.group.kill(holderName);
  }
}

/** Every kill of one client, its servers started once and torn down after, even on error or Ctrl-C. */
async function measure(ctx: ExperimentContext, client: string, ttls: number[], repeats: number, signal: AbortSignal): Promise<Trial[]> {
  const backend = backendOf(client);
  const dir = join(ctx.dir, "servers", client);
  mkdirSync(join(dir, "logs"), { recursive: true });
  const group = new ProcessGroup(dir);
  let waiter: LockClient | null = null;
  let admin: EtcdAdmin | null = null;
  const trials: Trial[] = [];
  try {
    ctx.log(`ttl-liveness: starting ${backend} servers for ${client} ...`);
    const starting = startServers(group, backend, dir);
    starting.catch(() => {});
    const endpoints = await until(starting, signal);
    waiter = await createClient(client, { endpoints, ownerPrefix: "waiter", commandTimeoutMs: 2000, rng: rng(1, "waiter"), options: {} });
    // The harness's own question (what lease the member granted), on a client port, not through the lock client.
    if (backend === "etcd") admin = new EtcdAdmin(endpoints[0].name, endpoints[0].port, 2000);
    const bench: Bench = { group, dir, client, backend, endpoints, waiter, admin, killAfterMs: ctx.options["kill-after"] as number, signal };
    for (const ttl of ttls) {
      for (let i = 1; i <= repeats; i++) {
        const t = await killOnce(bench, ttl, i);
        ctx.log(`ttl-liveness: ${client} TTL ${ttl} ms, kill ${i}/${repeats}: ${t.blocked_ms === null ? t.error : `blocked ${t.blocked_ms} ms (lease ${t.lease_ms} ms)`}`);
        trials.push(t);
      }
    }
    return trials;
  } finally {
    await waiter?.close().catch(() => {});
    admin?.close();
    await group.stopAll();
    // etcd preallocates its WAL (tens of MB a member): the logs stay, the data goes.
    rmSync(join(dir, "data"), { recursive: true, force: true });
  }
}

/** One short fenced run at the shortest TTL, pauses from half to four leases (the lease the client really takes). */
async function fencedRun(ctx: ExperimentContext, client: string, ttl: number, leaseMs: number, signal: AbortSignal): Promise<FencedRun> {
  const backend = backendOf(client);
  const pause: [number, number] = [Math.round(leaseMs / 2), leaseMs * 4];
  ctx.log(`ttl-liveness: ${client} on ${backend}, TTL ${ttl} ms, pauses ${pause[0]}-${pause[1]} ms, fencing on ...`);
  const r = await jepsen([
    "--backend", backend, "--client", client, "--nemesis", "pause", "--fence", "on", "--ttl", String(ttl),
    "--pause-min", String(pause[0]), "--pause-max", String(pause[1]),
    "--time-limit", String(ctx.options["fenced-time-limit"]), "--seed", String(ctx.options.seed), "--store", ctx.runStore,
  ], signal).catch((err: unknown) => {
    // An interrupted run stores no results: the interruption is what to report.
    throw signal.aborted ? signal.reason : err;
  });
  const stats = r.results.stats as { ops?: Record<string, { ok: number }>; stale_writes_refused?: number };
  return {
    client, backend, ttl_ms: ttl, pause_ms: pause, exit_code: r.code, valid: r.results.valid, holds: stats.ops?.acquire?.ok ?? 0,
    stale_writes_refused: stats.stale_writes_refused ?? 0, anomaly_types: r.results.anomaly_types, run: relative(ctx.dir, r.runDir),
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function findings(trials: Trial[], fenced: FencedRun[], clients: string[], ttls: number[], killAfterMs: number): Findings {
  const cells = clients.flatMap((client) => ttls.map((ttl) => {
    const all = trials.filter((t) => t.client === client && t.ttl_ms === ttl);
    const ok = all.filter((t) => t.blocked_ms !== null);
    const blocked = ok.map((t) => t.blocked_ms!);
    const leases = [...new Set(ok.map((t) => t.lease_ms))];
    return { client, backend: backendOf(client), ttl, kills: all.length, ok, blocked, leases, after: ok.map((t) => t.after_lease_end_ms!) };
  }));
  const measured = cells.filter((c) => c.ok.length > 0);
  const perClient = (y: (c: (typeof cells)[number]) => number) =>
    clients.map((client) => ({ name: `${client} (${backendOf(client)})`, points: measured.filter((c) => c.client === client).map((c): [number, number] => [c.ttl, y(c)]) }));
  const failed = trials.filter((t) => t.blocked_ms === null);
  const summary = [`Each holder was SIGKILLed ${killAfterMs} ms after its grant, so a lock freed only by its lease stays blocked for about the lease less those ${killAfterMs} ms, plus the time the waiter takes to notice.`];
  summary.push(...clients.map((client) => {
    const mine = measured.filter((c) => c.client === client);
    if (mine.length === 0) return `${client}: no kill measured anything (${failed.find((t) => t.client === client)?.error ?? "no kills"}).`;
    const rounded = mine.filter((c) => c.leases.some((l) => l !== c.ttl));
    return `${client} on ${backendOf(client)}: after the holder's SIGKILL the lock stayed blocked ${mine.map((c) => `${median(c.blocked)} ms at TTL ${c.ttl}`).join(", ")} (medians); the waiter got in ${median(mine.flatMap((c) => c.after))} ms (median) after the latest the lease can have ended.${
      rounded.length ? ` Its leases were ${rounded.map((c) => `${c.leases.join("/")} ms where ${c.ttl} were asked`).join(", ")}.` : ""}`;
  }));
  if (failed.length) summary.push(`${failed.length} kill(s) measured nothing: ${failed.map((t) => `${t.client} TTL ${t.ttl_ms} #${t.repeat}: ${t.error}`).join("; ")}.`);
  if (fenced.length) {
    const valid = fenced.filter((f) => f.valid === true).length;
    summary.push(`Fencing on at the shortest TTL, pauses aimed at holders: ${valid} of ${fenced.length} runs valid, ${fenced.map((f) => `${f.client} ${f.stale_writes_refused} stale write(s) refused in ${f.holds} holds`).join(", ")}.`);
  }
  return {
    summary,
    tables: [
      {
        title: "Blocked time after the holder's SIGKILL",
        head: ["client", "backend", "TTL (ms)", "lease (ms)", "kills", "blocked min", "median", "max", "blocked - TTL (median)", "after lease end (median)"],
        rows: cells.map((c) => c.ok.length === 0
          ? [c.client, c.backend, c.ttl, "-", `0/${c.kills}`, "-", "-", "-", "-", "-"]
          : [c.client, c.backend, c.ttl, c.leases.join("/"), `${c.ok.length}/${c.kills}`, Math.min(...c.blocked), median(c.blocked), Math.max(...c.blocked), r1(median(c.blocked) - c.ttl), median(c.after)]),
        note: "blocked: from the SIGKILL to the waiter's grant, in ms. lease: what the holder really held (etcd: whole seconds, as the member granted them). after lease end: from the latest the lease can have ended (its grant or last renewal answered, plus the lease) to the waiter's grant: how soon the waiter noticed, at least.",
      },
      {
        title: "Fencing on at the shortest TTL",
        head: ["client", "backend", "TTL (ms)", "pauses (ms)", "holds", "verdict", "stale writes refused", "anomalies", "run"],
        rows: fenced.map((f) => [f.client, f.backend, f.ttl_ms, `${f.pause_ms[0]}-${f.pause_ms[1]}`, f.holds, f.valid === true ? "valid" : f.valid === false ? "INVALID" : "unknown", f.stale_writes_refused, f.anomaly_types.join(", ") || "none", f.run]),
        note: "test:jepsen --nemesis pause --fence on: SIGSTOPs aimed at holders, from half a lease to four; a stale write refused is a paused holder's write the resource turned away because a later holder's fence had already reached it.",
      },
    ],
    plots: [
      {
        title: "Median blocked time after the holder's SIGKILL, against TTL",
        x: "TTL asked for (ms)",
        y: "blocked (ms)",
        logX: true,
        series: [...perClient((c) => median(c.blocked)), { name: "the TTL itself", points: ttls.map((t): [number, number] => [t, t]) }],
      },
      {
        // On the first plot every line lies near the TTL; what differs is this.
        title: "Median blocked time beyond the TTL asked for",
        x: "TTL asked for (ms)",
        y: "blocked - TTL (ms)",
        logX: true,
        series: perClient((c) => r1(median(c.blocked) - c.ttl)),
      },
    ],
    data: { ttls_ms: ttls, clients, trials, fenced },
    runs: fenced.map((f) => f.run),
  };
}

export const ttlLiveness: Experiment = {
  name: "ttl-liveness",
  title: "TTL and liveness: how long a SIGKILLed holder blocks the lock, per backend",
  describe: "the holder SIGKILLed while holding, at several TTLs: time from the kill to the next grant per backend, and a fenced run at the shortest TTL",
  options: OPTIONS,
  // A TTL of a second: short, yet long enough that a holder's report reaching us late
  // on a busy machine still leaves most of the lease to measure.
  quick: { clients: ["redis", "etcd-queue"], ttls: ["1000"], repeats: 1, "fenced-time-limit": 3 },
  // Each client's backend's servers, which it starts itself for the kills.
  starts: (o) => [...new Set((o.clients as string[]).flatMap((c) => SERVER_NEEDS[backendOf(c)] ?? []))],
  async run(ctx): Promise<Findings> {
    const ttls = (ctx.options.ttls as string[]).map((s) => {
      const ttl = Number(s);
      // Below 100 ms a Redlock's validity (TTL - elapsed - drift) leaves nothing on a busy machine.
      if (!Number.isInteger(ttl) || ttl < 100) throw new BadInput(`--ttls: ${JSON.stringify(s)} is not a whole number of ms of at least 100`);
      return ttl;
    });
    const clients = ctx.options.clients as string[];
    const repeats = ctx.options.repeats as number;
    const stop = interruptible(ctx.log);
    try {
      const trials: Trial[] = [];
      for (const client of clients) trials.push(...(await measure(ctx, client, ttls, repeats, stop.signal)));
      const shortest = Math.min(...ttls);
      const fenced: FencedRun[] = [];
      for (const client of clients) {
        const lease = trials.find((t) => t.client === client && t.ttl_ms === shortest && t.lease_ms !== null)?.lease_ms ?? shortest;
        fenced.push(await fencedRun(ctx, client, shortest, lease, stop.signal));
      }
      return findings(trials, fenced, clients, ttls, ctx.options["kill-after"] as number);
    } finally {
      stop.release();
    }
  },
};
