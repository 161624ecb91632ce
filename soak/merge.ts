// `fencecheck soak --merge DIR...`: the soak directories of the shards of one soak
// (--shard I/N on N machines, every one with the same --seed) made into one soak
// directory, summarized, compared and judged exactly as one soak of the whole
// plan would be. Everything is read and checked before anything is written: the
// directories must be shards of the same matrix, --only, seed, test count, time
// limit, deploy and number of shards, each shard given once, each holding the
// runs its share of the plan gives it. Nothing in a shard's directory changes.
//
// The merged directory is a soak directory like any other, under <store>/soaks/:
// the shards' run directories and output logs are copied into it at the paths
// their records give (a run directory that two shards started in the same
// millisecond gets a suffix), so summary.html's links work from the directory
// alone, from an artifact, and after the shards' directories are gone. A run takes
// well under a megabyte, so a night's copy is tens of megabytes.
//
// A shard that was never given is reported, not refused: the other shards' runs
// are still the night's evidence. Its runs are counted not run, the summary says
// INCOMPLETE, and the exit code is 2 at best (summary.ts), so CI does not pass a
// night that ran part of the matrix. A shard killed before its summary (a CI
// time-out) is taken as --summarize would take it: its records, and the history
// of the run it was in checked, in the merged copy.
import { cpSync, existsSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { BadInput } from "../lib/index.ts";
import { finishSoak, readSummary } from "./finish.ts";
import { runSeed } from "./matrix.ts";
import { plannedPairs, planRuns, shardText, type PlanOptions, type Shard } from "./plan.ts";
import { appendRecord, createSoakDir, linkLatest, readPlan, readRecords, SOAK_FILES, writePlan, type PlannedRun, type RunRecord, type SoakPlan } from "./records.ts";
import { recoverRuns } from "./recover.ts";
import type { SoakSummary } from "./summary.ts";

export interface MergeOptions {
  /** The merged soak goes to <store>/soaks/<time>/ and is compared with the soaks there. */
  store: string;
  compare: string | null;
  keepRuns: number | null;
  log: (line: string) => void;
}

/** A shard's directory as read before anything is written. */
interface ShardDir {
  dir: string;
  plan: SoakPlan;
  shard: Shard;
  /** null: the shard was killed before it wrote one. */
  summary: SoakSummary | null;
  /** runs.ndjson, read when there is no summary. */
  records: RunRecord[];
}

type NotRun = PlannedRun & { reason: string };

export async function mergeSoaks(dirs: readonly string[], o: MergeOptions): Promise<{ soakDir: string; summary: SoakSummary }> {
  if (dirs.length === 0) throw new BadInput("--merge needs the soak directories of the shards: fencecheck soak --merge DIR [DIR...]");
  const shards = readShards(dirs, o.log);
  const first = shards[0].plan;
  const count = shards[0].shard.count;
  const given = new Set(shards.map((s) => s.shard.index));
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !given.has(i));

  const soakDir = createSoakDir(o.store);
  const options = planOptionsOf(first);
  const plan: SoakPlan = {
    format: 1,
    kind: "soak",
    matrix: first.matrix,
    options: first.options,
    started: shards.map((s) => s.plan.started).sort()[0],
    command: process.argv.slice(2),
    runs: planRuns(options, soakDir),
    // The directory itself, not the link (soaks/latest) it may have been given as.
    merged: { count, shards: shards.map((s) => ({ index: s.shard.index, dir: realpathSync(s.dir), started: s.plan.started })), missing },
  };
  writePlan(soakDir, plan);
  linkLatest(o.store, soakDir);
  o.log(`fencecheck soak --merge: matrix ${first.matrix.name} (${first.matrix.configurations.length} configurations x ${first.options.test_count}), seed ${first.options.seed}, shards ${[...given].sort((a, b) => a - b).join(", ")} of ${count}, soak directory ${soakDir}`);

  const records: RunRecord[] = [];
  const notRun: NotRun[] = [];
  let wallS = 0;
  let interrupted = false;
  for (const s of shards) {
    const part = await bringShard(s, soakDir, o.log);
    records.push(...part.records);
    notRun.push(...part.notRun);
    // The shards ran side by side: the night took as long as its longest shard.
    wallS = Math.max(wallS, part.wallS);
    interrupted ||= part.interrupted;
    o.log(`shard ${shardText(s.shard)}: ${part.records.length} of ${s.plan.runs.length} runs ran (${s.dir})`);
  }
  for (const index of missing) {
    const runs = planRuns({ ...options, shard: { index, count } }, soakDir);
    o.log(`shard ${index}/${count} is missing: no directory of it was given; its ${runs.length} runs are counted not run and the merged soak is INCOMPLETE`);
    notRun.push(...runs.map((r) => ({ ...r, reason: `shard ${index}/${count} was not merged: no directory of it was given to --merge` })));
  }
  const order = new Map(plan.runs.map((r, i) => [`${r.config}#${r.index}`, i]));
  records.sort((a, b) => order.get(`${a.config}#${a.index}`)! - order.get(`${b.config}#${b.index}`)!);
  for (const r of records) appendRecord(soakDir, r);
  const summary = await finishSoak({ soakDir, store: o.store, plan, records, notRun, wallS, interrupted, compare: o.compare, keepRuns: o.keepRuns });
  return { soakDir, summary };
}

/** Every directory read and held to the others; BadInput names the directory and what is wrong. */
function readShards(dirs: readonly string[], log: (line: string) => void): ShardDir[] {
  const out: ShardDir[] = [];
  for (const dir of dirs) {
    let plan: SoakPlan;
    try {
      plan = readPlan(dir);
    } catch (err) {
      throw err instanceof BadInput ? new BadInput(`--merge: ${err.message}`) : err;
    }
    const shard = plan.shard;
    if (!shard) throw new BadInput(`--merge: ${dir} is a whole soak (it ran without --shard), not a shard of one`);
    if (out.length) sameSoak(out[0], { dir, plan });
    const twice = out.find((s) => s.shard.index === shard.index);
    if (twice) throw new BadInput(`--merge: ${twice.dir} and ${dir} are both shard ${shardText(shard)}; give each shard once`);
    ownShare(dir, plan, shard);
    const hasSummary = existsSync(join(dir, SOAK_FILES.summary));
    const summary = hasSummary ? readSummary(dir, "--merge") : null;
    let records: RunRecord[] = [];
    if (!summary) {
      const read = readRecords(dir);
      for (const w of read.warnings) log(`warning: ${w}`);
      records = read.records;
    }
    out.push({ dir, plan, shard, summary, records });
  }
  return out.sort((a, b) => a.shard.index - b.shard.index);
}

/** What every shard of one soak shares: the plan is made from these, so a difference means other runs or other seeds. */
function sameSoak(a: { dir: string; plan: SoakPlan }, b: { dir: string; plan: SoakPlan }): void {
  const facts = (p: SoakPlan): Array<[string, unknown]> => [
    ["matrix", `${p.matrix.name} (${p.matrix.hash})`],
    ["configurations", p.matrix.configurations.map((c) => c.name).join(",")],
    ["seed", p.options.seed],
    ["test count", p.options.test_count],
    ["time limit", p.options.time_limit_s ?? "each configuration's own"],
    ["deploy", p.options.deploy ?? "each configuration's own"],
    ["number of shards", p.shard?.count],
  ];
  const mine = new Map(facts(a.plan));
  for (const [what, theirs] of facts(b.plan))
    if (JSON.stringify(mine.get(what)) !== JSON.stringify(theirs))
      throw new BadInput(
        `--merge: ${b.dir} is not a shard of the same soak as ${a.dir}: its ${what} is ${String(theirs)}, against ${String(mine.get(what))} (the shards of one soak are started with the same matrix, --only, --seed, --test-count, --time-limit, --deploy and N of --shard I/N)`,
      );
}

/** The shard planned exactly the runs and seeds its share gives it (a shard of another fencecheck's split would not). */
function ownShare(dir: string, plan: SoakPlan, shard: Shard): void {
  const expected = plannedPairs(plan.matrix.configurations, plan.options.test_count, shard).map((p) => `${p.config.name}#${p.index} seed ${runSeed(plan.options.seed, p.config.name, p.index)}`);
  const planned = plan.runs.map((r) => `${r.config}#${r.index} seed ${r.seed}`);
  if (JSON.stringify([...expected].sort()) !== JSON.stringify([...planned].sort()))
    throw new BadInput(`--merge: ${dir} planned other runs than share ${shardText(shard)} of its matrix gives (a shard of another version of fencecheck?), so its runs cannot be counted with the others`);
}

function planOptionsOf(plan: SoakPlan): PlanOptions {
  const o = plan.options;
  return { configurations: plan.matrix.configurations, testCount: o.test_count, seed: o.seed, timeLimitS: o.time_limit_s, deploy: o.deploy ?? null, metricsPort: o.metrics_port ?? null, shard: null };
}

/** A shard's records and not-run runs, its files copied into the merged soak `into`. */
async function bringShard(s: ShardDir, into: string, log: (line: string) => void): Promise<{ records: RunRecord[]; notRun: NotRun[]; wallS: number; interrupted: boolean }> {
  const tag = `shard ${shardText(s.shard)}`;
  const bring = (rel: string): string => copyInto(s.dir, into, rel, tag, log);
  const brought = (r: RunRecord): RunRecord => ({ ...r, run_dir: r.run_dir === null ? null : bring(r.run_dir), output: bring(r.output) });
  const tagged = (r: NotRun): NotRun => ({ ...r, reason: `${tag}: ${r.reason}` });
  if (s.summary) {
    const records = s.summary.configurations.flatMap((c) => c.runs).map(brought);
    return { records, notRun: s.summary.configurations.flatMap((c) => c.not_run).map(tagged), wallS: s.summary.wall_s, interrupted: s.summary.interrupted };
  }
  log(`${tag} (${s.dir}) has no summary: it was killed; its finished runs are merged, and the history of the run it was in is checked in the merged copy, as --summarize would`);
  const { records, notRun } = await recoverRuns(s.plan.runs, s.records.map(brought), {
    from: s.dir,
    into,
    place: (runDir, p) => {
      bring(join(SOAK_FILES.output, `${p.config}-${p.index}.log`));
      return join(into, bring(relative(s.dir, runDir)));
    },
    log,
  });
  return { records, notRun: notRun.map(tagged), wallS: records.reduce((t, r) => t + r.wall_s, 0), interrupted: false };
}

/** `rel` of the shard's directory copied to the same place in the merged one (or beside it, if a shard already put something there); the path it has there. */
function copyInto(from: string, into: string, rel: string, tag: string, log: (line: string) => void): string {
  // A path outside the shard's directory is not the shard's to hand over.
  if (isAbsolute(rel) || rel.startsWith("..")) return rel;
  const source = join(from, rel);
  if (!existsSync(source)) {
    log(`warning: ${tag}: ${source} is gone (pruned?); its record is kept, its links will not work`);
    return rel;
  }
  let target = rel;
  for (let n = 2; existsSync(join(into, target)); n++) target = `${rel}-${n}`;
  cpSync(source, join(into, target), { recursive: true });
  return target;
}
