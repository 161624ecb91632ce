// What the fault proxy costs when no fault is set: uncontended acquire+release
// cycles of the Redis lock, one client straight to a real redis-server, one
// through our proxy and one through Shopify's Toxiproxy (built by `fencecheck
// setup --extras toxiproxy`, which the npm script runs first), with the targets
// of issue 3 for ours (median through the proxy under 1.5 times direct, p99
// through the proxy under 3 ms); Toxiproxy's figures are for comparison. A script that prints
// figures rather than a timed test, because the machines it runs on are shared
// and noisy: a person or CI tooling reads the numbers. It exits 0 whether or not
// a target is met.
//
//   npm run bench:proxy -- [--cycles N] [--json]
import { join } from "node:path";
import { Toxiproxy } from "toxiproxy-node-client";
import { RedisLock } from "../backends/redis/client.ts";
import { BLOCK_CYCLES, CyclePath, measurePaths, runCycleBench, WARMUP_CYCLES, type PathFigures } from "./cycles.ts";
import { rng } from "../lib/index.ts";
import { spawnProxyServer, type SpawnedProxyServer } from "../proxy/index.ts";
import { startToxiproxy } from "../toxiproxy/index.ts";
import { freePort } from "../cluster/ports.ts";

const COMMAND = "npm run bench:proxy --";
const TTL_MS = 10_000;
const TARGET_MEDIAN_RATIO = 1.5;
const TARGET_PROXY_P99_MS = 3;

const USAGE = [
  `usage: ${COMMAND} [--cycles N] [--json]`,
  "",
  "Times uncontended acquire+release cycles of the Redis lock against a fresh",
  "redis-server on loopback, directly, through the fault proxy and through",
  "Toxiproxy, with no toxic, and checks the proxy's targets: median under",
  "1.5 x direct, p99 under 3 ms.",
  "Exit: 0 when the figures were printed (targets met or not), 254 bad options,",
  "255 the benchmark could not run.",
].join("\n");

interface Report {
  cycles: number;
  warmupCycles: number;
  blockCycles: number;
  node: string;
  direct: PathFigures;
  proxy: PathFigures;
  toxiproxy: PathFigures & { version: string };
  ratio: { median: number; p99: number };
  toxiproxyRatio: { median: number; p99: number };
  targets: {
    medianRatio: { limit: number; value: number; pass: boolean };
    proxyP99Ms: { limit: number; value: number; pass: boolean };
  };
}

function report(cycles: number, direct: PathFigures, proxy: PathFigures, toxiproxy: PathFigures & { version: string }): Report {
  const medianRatio = proxy.medianMs / direct.medianMs;
  return {
    cycles,
    warmupCycles: WARMUP_CYCLES,
    blockCycles: BLOCK_CYCLES,
    node: process.version,
    direct,
    proxy,
    toxiproxy,
    ratio: { median: medianRatio, p99: proxy.p99Ms / direct.p99Ms },
    toxiproxyRatio: { median: toxiproxy.medianMs / direct.medianMs, p99: toxiproxy.p99Ms / direct.p99Ms },
    targets: {
      medianRatio: { limit: TARGET_MEDIAN_RATIO, value: medianRatio, pass: medianRatio < TARGET_MEDIAN_RATIO },
      proxyP99Ms: { limit: TARGET_PROXY_P99_MS, value: proxy.p99Ms, pass: proxy.p99Ms < TARGET_PROXY_P99_MS },
    },
  };
}

function table(r: Report): string {
  const ms = (x: number): string => x.toFixed(3).padStart(9);
  const row = (name: string, f: PathFigures): string => `${name.padEnd(10)}${String(f.cycles).padStart(8)}${ms(f.medianMs)}${ms(f.p99Ms)}${ms(f.maxMs)}`;
  const ratio = (name: string, x: { median: number; p99: number }): string => `${name.padEnd(18)}${x.median.toFixed(2).padStart(9)}${x.p99.toFixed(2).padStart(9)}`;
  const verdict = (pass: boolean): string => (pass ? "PASS" : "FAIL");
  const { medianRatio, proxyP99Ms } = r.targets;
  return [
    `proxy overhead: uncontended acquire+release on one local redis-server (node ${r.node}, ${r.warmupCycles} warm-up cycles each, blocks of ${r.blockCycles})`,
    "",
    `${"path".padEnd(10)}${"cycles".padStart(8)}${"median".padStart(9)}${"p99".padStart(9)}${"max".padStart(9)}   (ms)`,
    row("direct", r.direct),
    row("proxy", r.proxy),
    row("toxiproxy", r.toxiproxy),
    ratio("proxy/direct", r.ratio),
    ratio("toxiproxy/direct", r.toxiproxyRatio),
    `(proxy: fencecheck's own fault proxy; toxiproxy: Shopify's Toxiproxy ${r.toxiproxy.version})`,
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

process.exitCode = await runCycleBench("bench:proxy", USAGE, async ({ redis, group, runDir, cycles, stopped, onClose }) => {
  const server: SpawnedProxyServer = await spawnProxyServer({ logFile: join(runDir, "logs", "proxy.log") });
  onClose(() => server.stop());
  // The proxy is not one of the group's processes; the reaper still kills it if we die.
  group.watch(server.pid);
  // Toxiproxy in the group: stopped at teardown, and by the reaper if we die.
  const toxiproxy = await startToxiproxy({ port: await freePort(), logFile: join(runDir, "logs", "toxiproxy.log"), group });
  const through = async (url: string): Promise<{ host: string; port: number }> => {
    const created = await new Toxiproxy(url).createProxy({ name: "redis-1", listen: "127.0.0.1:0", upstream: `127.0.0.1:${redis.port}` });
    return { host: "127.0.0.1", port: listenPort(created.listen) };
  };
  const client = (endpoint: { host: string; port: number }, name: string): RedisLock => {
    const lock = new RedisLock({ endpoint, ownerPrefix: `bench-${name}`, commandTimeoutMs: 1000, rng: rng(1, name) });
    onClose(() => lock.close());
    return lock;
  };
  const direct = new CyclePath("direct", client({ host: redis.host, port: redis.port }, "direct"), TTL_MS);
  const proxied = new CyclePath("proxy", client(await through(server.url), "proxy"), TTL_MS);
  const viaToxiproxy = new CyclePath("toxiproxy", client(await through(toxiproxy.url), "toxiproxy"), TTL_MS);
  await measurePaths([direct, proxied, viaToxiproxy], { warmup: WARMUP_CYCLES, cycles, block: BLOCK_CYCLES }, stopped);
  return stopped() ? null : report(cycles, direct.figures(), proxied.figures(), { ...viaToxiproxy.figures(), version: toxiproxy.version });
}, table);
