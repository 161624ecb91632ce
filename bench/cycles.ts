// Uncontended acquire+release cycles of one lock client on a key of its own, timed
// cycle by cycle: what bench:proxy and bench:protocol compare two ways of reaching
// the same lock with. The cycles of the two paths alternate in blocks, so a
// neighbour's burst on a shared machine lands on both alike.
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hold, LockClient } from "../clients/index.ts";
import { ProcessGroup } from "../cluster/processes.ts";
import { PortPlan } from "../cluster/ports.ts";
import { startRedisNodes } from "../backends/redis/server.ts";
import type { ServerNode } from "../cluster/cluster.ts";
import { BadInput, EXIT, helpText, noPositional, parseArgs, type OptionSpec } from "../lib/index.ts";

export interface PathFigures {
  cycles: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
}

/** One path under test: a lock client and the key only it uses, so nothing contends. */
export class CyclePath {
  readonly samples: number[] = [];
  constructor(
    readonly name: string,
    private readonly lock: LockClient,
    private readonly ttlMs: number,
  ) {}

  /** `n` acquire+release cycles; each one's wall time is kept when `record`. */
  async run(n: number, record: boolean): Promise<void> {
    const key = `bench:${this.name}`;
    for (let i = 0; i < n; i++) {
      const start = process.hrtime.bigint();
      const got = await this.lock.acquire(key, this.ttlMs, 0);
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

/** Split `total` into blocks of about `block` that add up exactly. */
function blocks(total: number, block: number): number[] {
  const count = Math.max(1, Math.round(total / block));
  return Array.from({ length: count }, (_, i) => Math.floor(((i + 1) * total) / count) - Math.floor((i * total) / count));
}

/** Warms both paths up, then runs `cycles` measured cycles of each in alternating blocks; stops between blocks when `stopped`. */
export async function measurePaths(paths: readonly CyclePath[], o: { warmup: number; cycles: number; block: number }, stopped: () => boolean): Promise<void> {
  for (const p of paths) await p.run(o.warmup, false);
  let i = 0;
  for (const n of blocks(o.cycles, o.block)) {
    if (stopped()) return;
    // The path that goes first turns every block, so none always follows another.
    const start = i++ % paths.length;
    for (const p of [...paths.slice(start), ...paths.slice(0, start)]) await p.run(n, true);
  }
}

export const WARMUP_CYCLES = 500;
export const BLOCK_CYCLES = 250;
const DEFAULT_CYCLES = 5000;

export const CYCLE_OPTIONS: readonly OptionSpec[] = [
  // Ten is the least that still makes a p99 mean something other than the max.
  { name: "cycles", kind: "int", default: DEFAULT_CYCLES, min: 10, help: `measured cycles per path, at least 10, after ${WARMUP_CYCLES} warm-up cycles each` },
  { name: "json", kind: "flag", default: false, help: "print one JSON object instead of the table" },
];

/** What a cycle benchmark's body is given: a fresh redis-server of its own, and the run's processes and directory. */
export interface CycleBenchRun {
  redis: ServerNode;
  group: ProcessGroup;
  runDir: string;
  cycles: number;
  /** Set once Ctrl-C (or SIGTERM) came: stop between blocks. */
  stopped(): boolean;
  /** Run at teardown, before the processes are stopped (close clients, stop a proxy). */
  onClose(close: () => Promise<void>): void;
}

/**
 * The frame of a cycle benchmark: its options (254 on bad ones), a redis-server
 * on loopback in a directory of its own, the body, then teardown whatever
 * happened. The body returns its report (printed as a table or as JSON), or
 * null when stopped. Returns the exit code.
 */
export async function runCycleBench<R>(name: string, usage: string, body: (run: CycleBenchRun) => Promise<R | null>, table: (r: R) => string): Promise<number> {
  let opts: { help: boolean; cycles: number; json: boolean };
  try {
    const { options: o, positional, help } = parseArgs(process.argv.slice(2), CYCLE_OPTIONS);
    noPositional(positional);
    opts = { help, cycles: o.cycles as number, json: o.json as boolean };
  } catch (e) {
    if (!(e instanceof BadInput)) throw e;
    process.stderr.write(`${e.message}\n`);
    return EXIT.badInput;
  }
  if (opts.help) {
    process.stdout.write(helpText(usage, CYCLE_OPTIONS));
    return EXIT.valid;
  }
  // Ctrl-C stops between blocks and still tears down; nothing is printed for a cut-short run.
  let interrupted: NodeJS.Signals | null = null;
  const onSignal = (sig: NodeJS.Signals): void => {
    interrupted ??= sig;
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const runDir = mkdtempSync(join(tmpdir(), `fencecheck-${name.replace(":", "-")}-`));
  mkdirSync(join(runDir, "logs"));
  const group = new ProcessGroup(runDir);
  const closers: Array<() => Promise<void>> = [];
  let failed = false;
  try {
    const [redis] = await startRedisNodes(group, new PortPlan(0), 1, { runDir });
    const report = await body({ redis: redis!, group, runDir, cycles: opts.cycles, stopped: () => interrupted !== null, onClose: (c) => void closers.push(c) });
    if (interrupted || report === null) return 128 + (interrupted === "SIGTERM" ? 15 : 2);
    process.stdout.write(`${opts.json ? JSON.stringify(report) : table(report)}\n`);
    return EXIT.valid;
  } catch (e) {
    failed = true;
    process.stderr.write(`${name} could not run: ${e instanceof Error ? e.message : String(e)}\n(logs in ${runDir}/logs)\n`);
    return EXIT.crash;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
    await group.stopAll();
    // A failed run keeps its logs for whoever reads the message above.
    if (!failed) rmSync(runDir, { recursive: true, force: true });
  }
}
