// Which runs a soak makes, and which of them a shard makes. A soak plans every
// (configuration, run index) pair of its matrix, run 0 of every configuration
// before run 1 of any, each with the seed `runSeed` derives from --seed, the
// configuration and the index. `--shard I/N` keeps the pairs of share I of N:
// since the seed is a function of the pair alone, a run gets the same seed in
// its shard as in one soak, and N shards started with the same --seed run the
// one soak's runs between them, each exactly once.
//
// The shares are dealt from the pairs in the order of a hash of each pair
// (configuration name and index), not from the planned order: dealt in the
// planned order, a matrix whose size is a multiple of N (the nightly preset's 42
// over 6) would give every run of a configuration to the same shard, which is
// splitting by configuration again. Dealt round-robin, the shares differ by one
// run at most.
import { createHash } from "node:crypto";
import { join } from "node:path";
import { BadInput } from "../lib/index.ts";
import { argvOf, runSeed, type Configuration } from "./matrix.ts";
import { SOAK_FILES, type PlannedRun, type Shard } from "./records.ts";

export type { Shard };

export interface PlanOptions {
  configurations: readonly Configuration[];
  testCount: number;
  seed: number;
  timeLimitS: number | null;
  deploy: "local" | "docker" | null;
  metricsPort: number | null;
  /** null: every run of the matrix. */
  shard: Shard | null;
}

/** The most shards a soak may be split into: far beyond any CI matrix, short of a typo's 1/10000. */
export const MAX_SHARDS = 256;

/** `I/N` as --shard takes it; BadInput names what is wrong. */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!m) throw new BadInput(`--shard must be I/N (this machine's share I of N, e.g. 2/6), got ${JSON.stringify(text)}`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS) throw new BadInput(`--shard ${text}: the number of shards must be 1 to ${MAX_SHARDS}, got ${count}`);
  if (index < 1 || index > count) throw new BadInput(`--shard ${text}: the share must be 1 to ${count}, got ${index}`);
  return { index, count };
}

/** The (configuration, index) pairs a soak or one shard of it runs, in the order it runs them. */
export function plannedPairs(configurations: readonly Configuration[], testCount: number, shard: Shard | null): Array<{ config: Configuration; index: number }> {
  const all: Array<{ config: Configuration; index: number }> = [];
  for (let index = 0; index < testCount; index++) for (const config of configurations) all.push({ config, index });
  if (shard === null) return all;
  const key = (p: { config: Configuration; index: number }): string => createHash("sha256").update(`${p.config.name}/${p.index}`).digest("hex");
  const dealt = all.map((p) => ({ p, k: key(p) })).sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  const mine = new Set(dealt.filter((_, rank) => rank % shard.count === shard.index - 1).map((d) => d.p));
  return all.filter((p) => mine.has(p));
}

/** Every run of the soak (or of its shard) with its seed and its `fencecheck test` arguments, stored under `soakDir`. */
export function planRuns(o: PlanOptions, soakDir: string): PlannedRun[] {
  return plannedPairs(o.configurations, o.testCount, o.shard).map(({ config, index }) => {
    const seed = runSeed(o.seed, config.name, index);
    const argv = argvOf(config, { timeLimitS: o.timeLimitS ?? undefined, deploy: o.deploy ?? undefined, seed, store: join(soakDir, SOAK_FILES.runs, config.name), metricsPort: o.metricsPort ?? undefined });
    return { config: config.name, index, seed, argv };
  });
}

export function shardText(s: Shard): string {
  return `${s.index}/${s.count}`;
}
