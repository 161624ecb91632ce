// What the adapter protocol costs (docs/adapter-protocol.md): uncontended
// acquire+release cycles of the same lock, examples/redis-lock-adapter.ts, on a
// fresh redis-server on loopback, once in this process as a TypeScript adapter
// and once as an adapter program (the Node bridge, adapters/node) that
// this process talks to in JSON lines over its standard input and output. The
// difference is what the protocol adds; a cycle is two operations, so half of it
// is the cost per operation, with a target of 0.2 ms at the median. A script that
// prints figures rather than a timed test (shared, noisy machines); it exits 0
// whether or not the target is met.
//
//   npm run bench:protocol -- [--cycles N] [--json]
import { loadAdapter, type ClientContext } from "../clients/index.ts";
import { repoFile, rng } from "../lib/index.ts";
import { BLOCK_CYCLES, CyclePath, measurePaths, runCycleBench, WARMUP_CYCLES, type PathFigures } from "./cycles.ts";

const COMMAND = "npm run bench:protocol --";
const TTL_MS = 10_000;
const TARGET_ADDED_MEDIAN_MS = 0.2;
const ADAPTER = "examples/redis-lock-adapter.ts";
const MANIFEST = "adapters/node/redis-example.adapter.json";

const USAGE = [
  `usage: ${COMMAND} [--cycles N] [--json]`,
  "",
  `Times uncontended acquire+release cycles of ${ADAPTER} against a fresh`,
  "redis-server on loopback, in this process and over the adapter protocol (the",
  "Node bridge as an adapter program), and prints what the protocol adds per",
  `operation (target: under ${TARGET_ADDED_MEDIAN_MS} ms at the median).`,
  "Exit: 0 when the figures were printed (target met or not), 254 bad options,",
  "255 the benchmark could not run.",
].join("\n");

interface Report {
  cycles: number;
  node: string;
  inProcess: PathFigures;
  protocol: PathFigures;
  /** Per operation (half a cycle), protocol minus in-process. */
  addedPerOperationMs: { median: number; p99: number };
  target: { limit: number; value: number; pass: boolean };
}

function table(r: Report): string {
  const ms = (x: number): string => x.toFixed(3).padStart(9);
  const row = (name: string, f: PathFigures): string => `${name.padEnd(12)}${String(f.cycles).padStart(8)}${ms(f.medianMs)}${ms(f.p99Ms)}${ms(f.maxMs)}`;
  return [
    `adapter protocol: uncontended acquire+release of ${ADAPTER} on one local redis-server (node ${r.node}, ${WARMUP_CYCLES} warm-up cycles each, blocks of ${BLOCK_CYCLES})`,
    "",
    `${"path".padEnd(12)}${"cycles".padStart(8)}${"median".padStart(9)}${"p99".padStart(9)}${"max".padStart(9)}   (ms per cycle)`,
    row("in-process", r.inProcess),
    row("protocol", r.protocol),
    `${"added/op".padEnd(20)}${ms(r.addedPerOperationMs.median)}${ms(r.addedPerOperationMs.p99)}`,
    "",
    `${r.target.pass ? "PASS" : "FAIL"} the protocol adds ${r.target.value.toFixed(3)} ms per operation at the median (target < ${r.target.limit} ms)`,
  ].join("\n");
}

process.exitCode = await runCycleBench("bench:protocol", USAGE, async ({ redis, cycles, stopped, onClose }) => {
  const ctx = (name: string): ClientContext => ({
    id: 0, endpoints: [{ name: "redis-1", host: redis.host, port: redis.port }], ownerPrefix: `bench-${name}`, commandTimeoutMs: 1000,
    rng: rng(1, name), options: {}, backend: "redis", ttlMs: TTL_MS, seed: 1,
  });
  const make = async (path: string, name: string): Promise<CyclePath> => {
    const lock = (await loadAdapter(repoFile(path))).create(ctx(name));
    onClose(() => lock.close());
    await lock.whenStarted?.();
    return new CyclePath(name, lock, TTL_MS);
  };
  const inProcess = await make(ADAPTER, "in-process");
  const protocol = await make(MANIFEST, "protocol");
  await measurePaths([inProcess, protocol], { warmup: WARMUP_CYCLES, cycles, block: BLOCK_CYCLES }, stopped);
  if (stopped()) return null;
  const a = inProcess.figures();
  const b = protocol.figures();
  const added = { median: (b.medianMs - a.medianMs) / 2, p99: (b.p99Ms - a.p99Ms) / 2 };
  const r: Report = {
    cycles, node: process.version, inProcess: a, protocol: b, addedPerOperationMs: added,
    target: { limit: TARGET_ADDED_MEDIAN_MS, value: added.median, pass: added.median < TARGET_ADDED_MEDIAN_MS },
  };
  return r;
}, table);
