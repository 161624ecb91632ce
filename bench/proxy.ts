// What the fault proxy costs when no fault is set: uncontended acquire+release
// cycles of the Redis lock, one client straight to a real redis-server and one
// through our proxy, with the targets of issue 3 (median through the proxy under
// 1.5 times direct, p99 through the proxy under 3 ms). A script that prints
// figures rather than a timed test, because the machines it runs on are shared
// and noisy: a person or CI tooling reads the numbers. It exits 0 whether or not
// a target is met.
//
//   npm run bench:proxy -- [--cycles N] [--json]
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Toxiproxy } from "toxiproxy-node-client";
import { RedisLock } from "../clients/redis.ts";
import type { Hold } from "../clients/index.ts";
import { ProcessGroup } from "../cluster/processes.ts";
import { PortPlan } from "../cluster/ports.ts";
import { startRedisNodes } from "../cluster/redis.ts";
import { BadInput, EXIT, helpText, noPositional, parseArgs, rng, type OptionSpec } from "../lib/index.ts";
import { spawnProxyServer, type SpawnedProxyServer } from "../proxy/index.ts";

const COMMAND = "npm run bench:proxy --";
const DEFAULT_CYCLES = 5000;
// Enough for ioredis, V8's JIT and both sockets to settle before anything counts.
const WARMUP_CYCLES = 500;
// Measured cycles come in blocks that alternate between the two paths, so a
// neighbour's burst on a shared machine lands on both alike instead of on
// whichever path happened to run at the time.
const BLOCK_CYCLES = 250;
const TTL_MS = 10_000;
const TARGET_MEDIAN_RATIO = 1.5;
const TARGET_PROXY_P99_MS = 3;

const USAGE = [
  `usage: ${COMMAND} [--cycles N] [--json]`,
  "",
  "Times uncontended acquire+release cycles of the Redis lock against a fresh",
  "redis-server on loopback, directly and through the fault proxy with no toxic,",
  "and checks the proxy's targets: median under 1.5 x direct, p99 under 3 ms.",
  "Exit: 0 when the figures were printed (targets met or not), 254 bad options,",
  "255 the benchmark could not run.",
].join("\n");

const BENCH_OPTIONS: readonly OptionSpec[] = [
  // Ten is the least that still makes a p99 mean something other than the max.
  { name: "cycles", kind: "int", default: DEFAULT_CYCLES, min: 10, help: `measured cycles per path, at least 10, after ${WARMUP_CYCLES} warm-up cycles each` },
  { name: "json", kind: "flag", default: false, help: "print one JSON object instead of the table" },
];

interface Options {
  help: boolean;
  cycles: number;
  json: boolean;
}

function parseOptions(argv: string[]): Options {
  const { options: o, positional, help } = parseArgs(argv, BENCH_OPTIONS);
  noPositional(positional);
  return { help, cycles: o.cycles as number, json: o.json as boolean };
}

interface PathFigures {
  cycles: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
}

interface Report {
  cycles: number;
  warmupCycles: number;
  blockCycles: number;
  node: string;
  direct: PathFigures;
  proxy: PathFigures;
  ratio: { median: number; p99: number };
  targets: {
    medianRatio: { limit: number; value: number; pass: boolean };
    proxyP99Ms: { limit: number; value: number; pass: boolean };
  };
}

/** One path under test: a lock client and the key only it uses, so nothing contends. */
class Path {
  readonly samples: number[] = [];
  constructor(
    readonly name: "direct" | "proxy",
    private readonly lock: RedisLock,
  ) {}

  /** `n` acquire+release cycles; each one's wall time is kept when `record`. */
  async run(n: number, record: boolean): Promise<void> {
    const key = `bench:${this.name}`;
    for (let i = 0; i < n; i++) {
      const start = process.hrtime.bigint();
      const got = await this.lock.acquire(key, TTL_MS, 0);
      if (got.type !== "ok") throw new Error(`${this.name}: acquire of an uncontended key answered ${got.type} ${got.error}`);
      const released = await this.release(key, got.value);
      const end = process.hrtime.bigint();
      // A release that did not delete would leave the key held and the next acquire "busy".
      if (!released) throw new Error(`${this.name}: release did not delete the key`);
      if (record) this.samples.push(Number(end - start) / 1e6);
    }
  }

  private async release(key: string, hold: Hold): Promise<boolean> {
    const out = await this.lock.release(key, hold);
    return out.type === "ok" && out.value.released;
  }

  figures(): PathFigures {
    const s = Float64Array.from(this.samples).sort();
    return { cycles: s.length, medianMs: rank(s, 0.5), p99Ms: rank(s, 0.99), maxMs: s[s.length - 1]! };
  }
}

/** Nearest-rank quantile of sorted samples: a value that was actually measured. */
function rank(sorted: Float64Array, q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

/** Split `total` into blocks of about BLOCK_CYCLES that add up exactly. */
function blocks(total: number): number[] {
  const count = Math.max(1, Math.round(total / BLOCK_CYCLES));
  return Array.from({ length: count }, (_, i) => Math.floor(((i + 1) * total) / count) - Math.floor((i * total) / count));
}

async function measure(direct: Path, proxied: Path, cycles: number, stopped: () => boolean): Promise<void> {
  await direct.run(WARMUP_CYCLES, false);
  await proxied.run(WARMUP_CYCLES, false);
  let i = 0;
  for (const n of blocks(cycles)) {
    if (stopped()) return;
    // The path that goes first swaps every block, so neither always follows the other.
    const [first, second] = i++ % 2 === 0 ? [direct, proxied] : [proxied, direct];
    await first.run(n, true);
    await second.run(n, true);
  }
}

function report(opts: Options, direct: PathFigures, proxy: PathFigures): Report {
  const medianRatio = proxy.medianMs / direct.medianMs;
  return {
    cycles: opts.cycles,
    warmupCycles: WARMUP_CYCLES,
    blockCycles: BLOCK_CYCLES,
    node: process.version,
    direct,
    proxy,
    ratio: { median: medianRatio, p99: proxy.p99Ms / direct.p99Ms },
    targets: {
      medianRatio: { limit: TARGET_MEDIAN_RATIO, value: medianRatio, pass: medianRatio < TARGET_MEDIAN_RATIO },
      proxyP99Ms: { limit: TARGET_PROXY_P99_MS, value: proxy.p99Ms, pass: proxy.p99Ms < TARGET_PROXY_P99_MS },
    },
  };
}

function table(r: Report): string {
  const ms = (x: number): string => x.toFixed(3).padStart(9);
  const row = (name: string, f: PathFigures): string => `${name.padEnd(8)}${String(f.cycles).padStart(8)}${ms(f.medianMs)}${ms(f.p99Ms)}${ms(f.maxMs)}`;
  const verdict = (pass: boolean): string => (pass ? "PASS" : "FAIL");
  const { medianRatio, proxyP99Ms } = r.targets;
  return [
    `proxy overhead: uncontended acquire+release on one local redis-server (node ${r.node}, ${r.warmupCycles} warm-up cycles each, blocks of ${r.blockCycles})`,
    "",
    `${"path".padEnd(8)}${"cycles".padStart(8)}${"median".padStart(9)}${"p99".padStart(9)}${"max".padStart(9)}   (ms)`,
    row("direct", r.direct),
    row("proxy", r.proxy),
    `${"ratio".padEnd(16)}${r.ratio.median.toFixed(2).padStart(9)}${r.ratio.p99.toFixed(2).padStart(9)}`,
    "",
    `${verdict(medianRatio.pass)} median through the proxy is ${medianRatio.value.toFixed(2)} x direct (target < ${medianRatio.limit})`,
    `${verdict(proxyP99Ms.pass)} p99 through the proxy is ${proxyP99Ms.value.toFixed(3)} ms (target < ${proxyP99Ms.limit} ms)`,
  ].join("\n");
}

function listenPort(listen: string): number {
  const port = Number(listen.slice(listen.lastIndexOf(":") + 1));
  if (!Number.isInteger(port) || port <= 0) throw new Error(`the proxy answered listen ${JSON.stringify(listen)}, not host:port`);
  return port;
}

async function main(): Promise<number> {
  let opts: Options;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof BadInput)) throw e;
    process.stderr.write(`${e.message}\n`);
    return EXIT.badInput;
  }
  if (opts.help) {
    process.stdout.write(helpText(USAGE, BENCH_OPTIONS));
    return EXIT.valid;
  }

  // Ctrl-C stops between blocks and still tears down; nothing is printed for a cut-short run.
  let interrupted: NodeJS.Signals | null = null;
  const onSignal = (sig: NodeJS.Signals): void => {
    interrupted ??= sig;
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  const runDir = mkdtempSync(join(tmpdir(), "fencecheck-bench-proxy-"));
  mkdirSync(join(runDir, "logs"));
  const group = new ProcessGroup(runDir);
  let server: SpawnedProxyServer | null = null;
  const locks: RedisLock[] = [];
  let failed = false;
  try {
    const [redis] = await startRedisNodes(group, new PortPlan(0), 1, { runDir });
    server = await spawnProxyServer({ logFile: join(runDir, "logs", "proxy.log") });
    // The proxy is not one of the group's processes; the reaper still kills it if we die.
    group.watch(server.pid);
    const created = await new Toxiproxy(server.url).createProxy({ name: "redis-1", listen: "127.0.0.1:0", upstream: `127.0.0.1:${redis!.port}` });
    const through = { host: "127.0.0.1", port: listenPort(created.listen) };

    const client = (endpoint: { host: string; port: number }, name: string): RedisLock => {
      const lock = new RedisLock({ endpoint, ownerPrefix: `bench-${name}`, commandTimeoutMs: 1000, rng: rng(1, name) });
      locks.push(lock);
      return lock;
    };
    const direct = new Path("direct", client({ host: redis!.host, port: redis!.port }, "direct"));
    const proxied = new Path("proxy", client(through, "proxy"));
    await measure(direct, proxied, opts.cycles, () => interrupted !== null);
    if (interrupted) return 128 + (interrupted === "SIGINT" ? 2 : 15);

    const r = report(opts, direct.figures(), proxied.figures());
    process.stdout.write(`${opts.json ? JSON.stringify(r) : table(r)}\n`);
    return EXIT.valid;
  } catch (e) {
    failed = true;
    process.stderr.write(`bench:proxy could not run: ${e instanceof Error ? e.message : String(e)}\n(logs in ${runDir}/logs)\n`);
    return EXIT.crash;
  } finally {
    for (const lock of locks) await lock.close();
    await server?.stop();
    await group.stopAll();
    // A failed run keeps its logs for whoever reads the message above.
    if (!failed) rmSync(runDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
