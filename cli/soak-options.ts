// The options of `fencecheck soak`, and how they become a soak request: the matrix
// loaded and every configuration validated through test:jepsen's own parser, the
// subset --only names, the soak's seed and its --shard; or the directories a
// --merge makes one soak. The command and the test of the CI
// workflow both go through `soakRequest`, so the workflow cannot ask for what the
// command would refuse.
import { availableParallelism } from "node:os";
import { BadInput, parseArgs, noPositional, type OptionSpec, type ParsedOptions } from "../lib/index.ts";
import { loadMatrixFile, loadPreset, parseShard, presetNames, readSummary, selectConfigurations, testOf, type Shard, type SoakOptions } from "../soak/index.ts";

/** The most runs a soak starts at once: each is several processes and servers. */
export const MAX_JOBS = 64;

export const SOAK_OPTIONS: readonly OptionSpec[] = [
  { name: "preset", kind: "string", default: undefined, choices: presetNames(), help: "a shipped matrix (soak/presets/<name>.json)" },
  { name: "matrix", kind: "string", default: undefined, help: "a matrix file of your own (JSON; docs/ci.md#the-matrix)" },
  { name: "test-count", kind: "int", default: 1, min: 1, max: 1000, help: "runs of each configuration" },
  { name: "time-limit", kind: "number", default: undefined, min: 1, defaultText: "each configuration's own, else 30", help: "seconds of operations in each run" },
  { name: "deploy", kind: "string", default: undefined, choices: ["local", "docker"], defaultText: "each configuration's own, else local", help: "where every run's servers run: local processes, or containers (see fencecheck test --deploy)" },
  { name: "time-budget", kind: "number", default: undefined, min: 1, defaultText: "none", help: "seconds for the whole soak; runs that would not fit are reported as not run" },
  { name: "seed", kind: "int", default: undefined, min: 0, max: 2 ** 31 - 1, defaultText: "random, printed", help: "run i of configuration c gets a seed derived from this, c and i" },
  { name: "store", kind: "string", default: "histories", help: "the run store; the soak goes to <store>/soaks/<time>/" },
  { name: "only", kind: "list", default: undefined, defaultText: "all", help: "configurations to run, comma-separated" },
  { name: "compare", kind: "string", default: undefined, defaultText: "the previous soak of the matrix", help: "a soak directory (or its summary.json) to compare with" },
  { name: "keep-runs", kind: "int", default: undefined, min: 0, defaultText: "keep all", help: "keep the run directories of the newest N soaks; older soaks keep their summaries only" },
  { name: "summarize", kind: "string", default: undefined, help: "write the summary of a soak directory left by a killed soak, and run nothing" },
  { name: "jobs", kind: "int", default: undefined, min: 1, max: MAX_JOBS, defaultText: "half the cores, at least 1", help: "runs going at once, each a fencecheck test of its own (ports are never drawn twice); the summary is the same whatever the jobs" },
  { name: "metrics-port", kind: "int", default: undefined, defaultText: "off", min: 0, max: 65535, help: "every run serves its Prometheus metrics at http://127.0.0.1:PORT/metrics in turn (fencecheck test --metrics-port), so one scrape job covers the soak; with --jobs N, job j's run on PORT+j; a fixed port of 1024 or more" },
  { name: "list", kind: "flag", default: false, help: "print the matrix's configurations and what each expects, and run nothing" },
  { name: "shard", kind: "string", default: undefined, defaultText: "all runs", help: "I/N: run share I of N of the soak's runs (configuration and run index pairs), for N machines started with the same --seed; --merge makes their directories one soak" },
  { name: "merge", kind: "flag", default: false, help: "make the soak directories given as arguments (the shards of one soak) one soak under <store>/soaks/, summarized, compared and judged as one; runs nothing" },
];

export const SOAK_USAGE = `Usage: fencecheck soak (--preset ${presetNames().join("|")} | --matrix FILE) [options]
       fencecheck soak --summarize <soak directory>
       fencecheck soak --merge <shard's soak directory>... [--store DIR] [--compare DIR] [--keep-runs N]

Runs every configuration of a matrix --test-count times as fencecheck test
runs, each stored as a test stores it, and judges each configuration against what
it expects: valid, or the anomaly types it must find in a share of its runs.
Prints a line per run and a table at the end, writes summary.json and
summary.html under <store>/soaks/<time>/ and says what changed since the
previous soak of the same matrix.
Over N machines: each runs --shard I/N with the same --seed (every run gets
the seed it would get in one soak), and --merge makes their soak directories
one soak, as if one machine had run it; a shard missing from the merge is
reported, its runs counted not run.
Exit: 255 if a run crashed, else 2 if one was unknown (or a merge lacks a
shard), else 1 if a configuration missed its expectation, else 0; 130 when
interrupted; 254 bad arguments.`;

export type SoakRequest =
  | { kind: "summarize"; dir: string; compare: string | null; keepRuns: number | null }
  /** The shards' soak directories, read by mergeSoaks (not here: the workflow's merge command names directories of a CI job). */
  | { kind: "merge"; dirs: string[]; store: string; compare: string | null; keepRuns: number | null }
  /** `list` prints the configurations instead of running them. */
  | ({ kind: "run" | "list" } & Omit<SoakOptions, "log">);

/** A soak command's arguments (after `fencecheck soak`) as a request; BadInput names what is wrong. */
export function parseSoakArgs(argv: string[]): { request: SoakRequest; help: boolean } {
  const { options, positional, help } = parseArgs(argv, SOAK_OPTIONS);
  // The directories of --merge are its arguments, as the files of cp are.
  if (!options.merge) noPositional(positional);
  if (help) return { request: { kind: "summarize", dir: "", compare: null, keepRuns: null }, help };
  return { request: soakRequest(options, positional), help };
}

/** Options the soak runs with, which mean nothing to a command that runs nothing. */
const RUN_ONLY = ["preset", "matrix", "only", "seed", "time-limit", "deploy", "time-budget", "metrics-port", "list", "shard", "jobs"];

export function soakRequest(o: ParsedOptions, positional: readonly string[] = []): SoakRequest {
  const compare = (o.compare as string | undefined) ?? null;
  // Read now, so a wrong path is refused before a soak of hours, not after it.
  if (compare !== null) readSummary(compare);
  const keepRuns = (o["keep-runs"] as number | undefined) ?? null;
  if (o.merge) {
    for (const n of [...RUN_ONLY, "summarize"]) if (o[n] !== undefined && o[n] !== false) throw new BadInput(`--merge runs nothing (the shards ran), so --${n} means nothing with it`);
    return { kind: "merge", dirs: [...positional], store: o.store as string, compare, keepRuns };
  }
  if (o.summarize !== undefined) {
    for (const n of RUN_ONLY) if (o[n] !== undefined && o[n] !== false) throw new BadInput(`--summarize runs nothing, so --${n} means nothing with it`);
    return { kind: "summarize", dir: o.summarize as string, compare, keepRuns };
  }
  if ((o.preset === undefined) === (o.matrix === undefined)) throw new BadInput(`give one of --preset (${presetNames().join(", ")}) or --matrix FILE`);
  const matrix = o.preset !== undefined ? loadPreset(o.preset as string) : loadMatrixFile(o.matrix as string);
  const only = (o.only as string[] | undefined) ?? null;
  const configurations = selectConfigurations(matrix, only ?? undefined);
  const timeLimitS = (o["time-limit"] as number | undefined) ?? null;
  const deploy = (o.deploy as "local" | "docker" | undefined) ?? null;
  const metricsPort = (o["metrics-port"] as number | undefined) ?? null;
  // 0 would give each run a port of its own, which no Prometheus could follow.
  if (metricsPort !== null && metricsPort < 1024)
    throw new BadInput(`--metrics-port of a soak must be a fixed port of 1024 or more, got ${metricsPort} (every run serves its metrics there in turn, for one Prometheus job to scrape)`);
  const jobs = (o.jobs as number | undefined) ?? defaultJobs();
  if (metricsPort !== null && metricsPort + jobs - 1 > 65535)
    throw new BadInput(`--metrics-port ${metricsPort} with --jobs ${jobs}: job j serves on port ${metricsPort} + j, and ${metricsPort + jobs - 1} is past 65535; give a lower port`);
  // With --time-limit or --deploy every run takes it; test:jepsen's parser judges it once per configuration.
  if (timeLimitS !== null || deploy !== null) for (const c of configurations) testOf(c, { timeLimitS: timeLimitS ?? undefined, deploy: deploy ?? undefined });
  const testCount = o["test-count"] as number;
  const shard = o.shard === undefined ? null : shardOf(o.shard as string, o.seed !== undefined, compare !== null, configurations.length * testCount);
  return {
    kind: o.list ? "list" : "run",
    matrix,
    configurations,
    only,
    testCount,
    timeLimitS,
    deploy,
    timeBudgetS: (o["time-budget"] as number | undefined) ?? null,
    metricsPort,
    jobs,
    shard,
    seed: (o.seed as number | undefined) ?? Math.floor(Math.random() * 2 ** 31),
    store: o.store as string,
    compare,
    keepRuns,
  };
}

/** Half the cores, at least 1: a run's servers, proxies and workers need the other half, or faults land late. */
export function defaultJobs(): number {
  return Math.max(1, Math.floor(availableParallelism() / 2));
}

/** --shard, refused where the shards could not add up to one soak. */
function shardOf(text: string, seeded: boolean, compared: boolean, runs: number): Shard {
  const shard = parseShard(text);
  // Each machine would draw a seed of its own, and the runs would not be one soak's.
  if (!seeded) throw new BadInput(`--shard ${text} needs --seed: the shards of one soak must share a seed (the same --seed on every machine), so that each run gets the seed it would get in one soak`);
  if (compared) throw new BadInput(`--compare means nothing with --shard: a shard is not compared (its share of the runs would read as falls in detection); compare the merged soak (fencecheck soak --merge DIR... --compare SOAK)`);
  if (shard.count > runs) throw new BadInput(`--shard ${text}: the soak has ${runs} run${runs === 1 ? "" : "s"}, so ${shard.count} shards would leave some with none; split it into at most ${runs}`);
  return shard;
}
